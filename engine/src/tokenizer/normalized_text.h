// The text as the pipeline sees it between normalization and the model: one
// entry per code point, each remembering the input bytes it came from, so that
// every token can report its offsets into the original text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

struct NormChar {
  char32_t cp;
  int32_t begin;  // [begin, end): bytes of the source character(s) in the input
  int32_t end;
  uint8_t ccc = 0;  // canonical combining class, for NFD's reordering
};

// A word of the pre-tokenized text: characters [begin, end) of the buffer.
struct Span {
  uint32_t begin;
  uint32_t end;
};

// One output character of a normalizer and how it relates to the input, as
// the Rust crate's NormalizedString::transform takes it: 0 replaces the next
// input character (and takes its offsets); +1 is inserted (and takes the
// offsets of the input character before it); -n replaces the next input
// character and drops the n after it. Following these rules exactly is what
// keeps offsets identical to the crate's where text is composed or removed.
struct CharChange {
  char32_t cp;
  int32_t change;
};

// The characters `changes` make of `in`, whose first `skipped` characters are
// dropped first.
void ApplyChanges(const std::vector<NormChar>& in, size_t skipped,
                  const std::vector<CharChange>& changes, std::vector<NormChar>* out);

// Appends one NormChar per code point of `text` (valid UTF-8; a stray byte
// becomes U+FFFD), offsets shifted by `base`.
void AppendChars(std::string_view text, int32_t base, std::vector<NormChar>* out);

// The UTF-8 of chars[begin, end); starts[k] is the byte offset of character
// begin + k and starts[end - begin] the total size.
void CharsToUtf8(const std::vector<NormChar>& chars, size_t begin, size_t end, std::string* utf8,
                 std::vector<int32_t>* starts);

}  // namespace engine::tokenizer
