// Hugging Face's BertNormalizer: clean text, isolate CJK ideographs, lower-case,
// strip accents.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "normalizers/normalizer.h"

namespace engine::tokenizer {

struct NormalizerOptions {
  bool clean_text = true;            // drop C* (not \t\n\r), NUL, U+FFFD; whitespace -> ' '
  bool handle_chinese_chars = true;  // put spaces around CJK ideographs
  bool strip_accents = true;         // NFD, then drop Mn
  bool lowercase = true;
};

class BertNormalizer : public Normalizer {
 public:
  explicit BertNormalizer(const NormalizerOptions& options);

  void Normalize(std::vector<NormChar>* chars) const override;

  // Appends the normalized characters of `in` to *out.
  void NormalizeInto(const std::vector<NormChar>& in, std::vector<NormChar>* out) const;

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
