// Hugging Face's BertNormalizer, keeping for every output character the bytes
// of the input character it came from (for token offsets).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

struct NormalizerOptions {
  bool clean_text = true;            // drop C* (not \t\n\r), NUL, U+FFFD; whitespace -> ' '
  bool handle_chinese_chars = true;  // put spaces around CJK ideographs
  bool strip_accents = true;         // NFD, then drop Mn
  bool lowercase = true;
};

struct NormChar {
  char32_t cp;
  int32_t begin;  // [begin, end): bytes of the source character in the input
  int32_t end;
  uint8_t ccc;  // canonical combining class, for NFD's reordering
};

class Normalizer {
 public:
  explicit Normalizer(const NormalizerOptions& options);

  // Appends the normalized characters of `text` (valid UTF-8) to *out; byte
  // offsets are shifted by `base`.
  void Normalize(std::string_view text, int32_t base, std::vector<NormChar>* out) const;

  const NormalizerOptions& options() const { return options_; }

 private:
  // Emits one character after lower-casing and accent stripping.
  void Emit(char32_t cp, int32_t begin, int32_t end, std::vector<NormChar>* out,
            size_t* run_start) const;

  NormalizerOptions options_;
  // ASCII goes through a table built from the same rules; kDrop marks removal.
  static constexpr char32_t kDrop = 0xFFFFFFFF;
  std::array<char32_t, 128> ascii_;
};

}  // namespace engine::tokenizer
