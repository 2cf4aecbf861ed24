// Hugging Face's NFC, NFD, NFKC and NFKD normalizers, through ICU's
// decomposition mappings, combining classes and pairwise composition, applied
// step by step as the crate's unicode-normalization-alignments does so that
// every output character is aligned to the input one the crate aligns it to.
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
  UnicodeNormalizer(const icu::Normalizer2* decomposer, const icu::Normalizer2* composer)
      : decomposer_(decomposer), composer_(composer) {}
  // Owned by ICU; composer_ is null for NFD and NFKD.
  const icu::Normalizer2* decomposer_;
  const icu::Normalizer2* composer_;
};

}  // namespace engine::tokenizer
