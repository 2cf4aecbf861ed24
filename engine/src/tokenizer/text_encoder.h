// One text to token ids with byte offsets: added tokens cut out of the input,
// the rest normalized, split into words and WordPiece'd. No special tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "added_tokens.h"
#include "normalizer.h"
#include "wordpiece.h"

namespace engine::tokenizer {

struct Piece {
  int32_t id;
  int32_t begin;  // [begin, end): bytes of the text it came from
  int32_t end;
};

// Buffers reused across calls (one set per thread) so that encoding a text
// allocates nothing once they have grown.
struct EncodeScratch {
  std::vector<NormChar> chars;
  std::u32string codepoints;
  std::string word;
  std::vector<int32_t> char_starts;
  std::vector<SubWord> subwords;

  // One huge request should not pin its memory to the thread forever.
  void Trim();
};

class TextEncoder {
 public:
  TextEncoder(Normalizer normalizer, WordPiece wordpiece,
              const std::vector<AddedToken>& added_tokens);

  // `text` must be valid UTF-8 shorter than 2 GiB. Replaces *out.
  void Encode(std::string_view text, EncodeScratch* scratch, std::vector<Piece>* out) const;

  const WordPiece& wordpiece() const { return wordpiece_; }

 private:
  void EncodeSegment(std::string_view segment, int32_t base, EncodeScratch* s,
                     std::vector<Piece>* out) const;
  void EncodeWords(size_t from, size_t to, EncodeScratch* s, std::vector<Piece>* out) const;

  Normalizer normalizer_;
  WordPiece wordpiece_;
  std::vector<AddedToken> raw_tokens_;         // matched in the input
  std::vector<AddedToken> normalized_tokens_;  // matched in the normalized text
  TokenMatcher<char> raw_matcher_;
  TokenMatcher<char32_t> normalized_matcher_;
};

}  // namespace engine::tokenizer
