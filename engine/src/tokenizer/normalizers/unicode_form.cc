#include "normalizers/unicode_form.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "absl/status/status.h"

namespace engine::tokenizer {

absl::StatusOr<std::unique_ptr<UnicodeNormalizer>> UnicodeNormalizer::Create(UnicodeForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case UnicodeForm::kNfc:
      n = icu::Normalizer2::getNFCInstance(status);
      break;
    case UnicodeForm::kNfd:
      n = icu::Normalizer2::getNFDInstance(status);
      break;
    case UnicodeForm::kNfkc:
      n = icu::Normalizer2::getNFKCInstance(status);
      break;
    case UnicodeForm::kNfkd:
      n = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || n == nullptr) {
    return absl::InternalError("ICU's normalization data is not available");
  }
  return std::unique_ptr<UnicodeNormalizer>(new UnicodeNormalizer(n));
}

void UnicodeNormalizer::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<NormChar> out;
  out.clear();
  const size_t n = chars->size();
  icu::UnicodeString run;
  icu::UnicodeString normalized;
  for (size_t b = 0; b < n;) {
    size_t e = b + 1;
    while (e < n && !normalizer_->hasBoundaryBefore(static_cast<UChar32>((*chars)[e].cp))) ++e;
    int32_t begin = (*chars)[b].begin;
    int32_t end = (*chars)[b].end;
    run.remove();
    for (size_t k = b; k < e; ++k) {
      run.append(static_cast<UChar32>((*chars)[k].cp));
      begin = std::min(begin, (*chars)[k].begin);
      end = std::max(end, (*chars)[k].end);
    }
    UErrorCode status = U_ZERO_ERROR;
    normalizer_->normalize(run, normalized, status);
    if (U_FAILURE(status)) normalized = run;
    for (int32_t i = 0; i < normalized.length();) {
      const UChar32 c = normalized.char32At(i);
      i += U16_LENGTH(c);
      // A run that maps to itself keeps each character's own offsets.
      out.push_back({static_cast<char32_t>(c), e - b == 1 ? (*chars)[b].begin : begin,
                     e - b == 1 ? (*chars)[b].end : end, 0});
    }
    b = e;
  }
  chars->swap(out);
}

}  // namespace engine::tokenizer
