// Hugging Face's NFC, NFD, NFKC and NFKD normalizers, through ICU. Each run of
// characters between normalization boundaries is normalized as a unit; its
// output characters carry the input bytes of the whole run.
#pragma once

#include <unicode/uversion.h>

#include <vector>

#include "absl/status/statusor.h"
#include "normalizers/normalizer.h"

U_NAMESPACE_BEGIN
class Normalizer2;
U_NAMESPACE_END

namespace engine::tokenizer {

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

class UnicodeNormalizer : public Normalizer {
 public:
  static absl::StatusOr<std::unique_ptr<UnicodeNormalizer>> Create(UnicodeForm form);
  void Normalize(std::vector<NormChar>* chars) const override;

 private:
  explicit UnicodeNormalizer(const icu::Normalizer2* n) : normalizer_(n) {}
  const icu::Normalizer2* normalizer_;  // owned by ICU
};

}  // namespace engine::tokenizer
