#include "normalizers/unicode_form.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <optional>

#include "absl/status/status.h"

namespace engine::tokenizer {

absl::StatusOr<std::unique_ptr<UnicodeNormalizer>> UnicodeNormalizer::Create(UnicodeForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const bool compatibility = form == UnicodeForm::kNfkc || form == UnicodeForm::kNfkd;
  const bool composed = form == UnicodeForm::kNfc || form == UnicodeForm::kNfkc;
  const icu::Normalizer2* decomposer = compatibility ? icu::Normalizer2::getNFKDInstance(status)
                                                     : icu::Normalizer2::getNFDInstance(status);
  // Composition is canonical in both NFC and NFKC.
  const icu::Normalizer2* composer = composed ? icu::Normalizer2::getNFCInstance(status) : nullptr;
  if (U_FAILURE(status) || decomposer == nullptr || (composed && composer == nullptr)) {
    return absl::InternalError("ICU's normalization data is not available");
  }
  return std::unique_ptr<UnicodeNormalizer>(new UnicodeNormalizer(decomposer, composer));
}

namespace {

struct Tagged {
  char32_t cp;
  int32_t change;  // as CharChange
  uint8_t ccc;
};

// Full decomposition of each character, the first of its characters tagged
// 0 and the rest +1, then each run of non-starters stably sorted by combining
// class (canonical ordering), as unicode-normalization-alignments (the
// crate's NFD/NFKD) tags them.
void Decompose(const icu::Normalizer2* decomposer, const std::vector<NormChar>& chars,
               std::vector<Tagged>* out) {
  out->clear();
  icu::UnicodeString mapping;
  size_t run = 0;  // start of the current run of non-starters
  const auto push = [&](UChar32 c, int32_t change) {
    const auto ccc = static_cast<uint8_t>(u_getCombiningClass(c));
    if (ccc == 0) {
      std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(run), out->end(),
                       [](const Tagged& a, const Tagged& b) { return a.ccc < b.ccc; });
      run = out->size() + 1;
    }
    out->push_back({static_cast<char32_t>(c), change, ccc});
  };
  for (const NormChar& nc : chars) {
    const auto c = static_cast<UChar32>(nc.cp);
    if (!decomposer->getDecomposition(c, mapping)) {
      push(c, 0);
      continue;
    }
    int32_t change = 0;
    for (int32_t i = 0; i < mapping.length();) {
      const UChar32 d = mapping.char32At(i);
      i += U16_LENGTH(d);
      push(d, change);
      change = 1;
    }
  }
  std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(std::min(run, out->size())),
                   out->end(), [](const Tagged& a, const Tagged& b) { return a.ccc < b.ccc; });
}

// Canonical composition of the decomposed characters; a composite's change
// adds its two parts' and drops one character (the crate's Recompositions).
void Recompose(const icu::Normalizer2* composer, const std::vector<Tagged>& in,
               std::vector<CharChange>* out) {
  std::optional<Tagged> composee;
  int last_ccc = -1;  // -1: no blocked character since the composee
  std::vector<Tagged> blocked;
  const auto emit = [&](const Tagged& t) { out->push_back({t.cp, t.change}); };
  const auto flush = [&] {
    emit(*composee);
    for (const Tagged& t : blocked) emit(t);
    blocked.clear();
  };
  for (const Tagged& ch : in) {
    if (!composee) {
      if (ch.ccc != 0) {
        emit(ch);
      } else {
        composee = ch;
      }
      continue;
    }
    if (last_ccc < 0 || last_ccc < ch.ccc) {
      const UChar32 r =
          composer->composePair(static_cast<UChar32>(composee->cp), static_cast<UChar32>(ch.cp));
      if (r >= 0) {
        composee = Tagged{static_cast<char32_t>(r), composee->change + ch.change - 1, 0};
        continue;
      }
    }
    if (ch.ccc == 0) {
      flush();
      composee = ch;
      last_ccc = -1;
      continue;
    }
    blocked.push_back(ch);
    last_ccc = ch.ccc;
  }
  if (composee) flush();
}

}  // namespace

void UnicodeNormalizer::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<Tagged> decomposed;
  thread_local std::vector<CharChange> changes;
  thread_local std::vector<NormChar> out;
  Decompose(decomposer_, *chars, &decomposed);
  changes.clear();
  if (composer_ == nullptr) {
    for (const Tagged& t : decomposed) changes.push_back({t.cp, t.change});
  } else {
    Recompose(composer_, decomposed, &changes);
  }
  ApplyChanges(*chars, 0, changes, &out);
  chars->swap(out);
}

}  // namespace engine::tokenizer
