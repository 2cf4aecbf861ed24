#include "normalizers/bert_normalizer.h"

#include "unicode.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

// Rust's BertNormalizer counts \t \n \r as whitespace, not as controls.
bool IsControl(char32_t cp) {
  return cp != U'\t' && cp != U'\n' && cp != U'\r' && IsBertControlCategory(cp);
}

}  // namespace

BertNormalizer::BertNormalizer(const NormalizerOptions& options) : options_(options) {
  for (char32_t c = 0; c < 128; ++c) {
    char32_t out = c;
    if (options_.clean_text && (c == 0 || IsControl(c))) {
      out = kDrop;
    } else if (options_.clean_text && IsWhitespace(c)) {
      out = U' ';
    } else if (options_.lowercase) {
      char32_t lower[2];
      ToLower(c, lower);
      out = lower[0];
    }
    ascii_[c] = out;
  }
}

void BertNormalizer::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<NormChar> out;
  out.clear();
  NormalizeInto(*chars, &out);
  chars->swap(out);
}

void BertNormalizer::NormalizeInto(const std::vector<NormChar>& in,
                                   std::vector<NormChar>* out) const {
  // NFD reorders runs of combining marks (ccc != 0) between two starters; the
  // run being built starts at out[run_start].
  size_t run_start = out->size();
  for (const NormChar& source : in) {
    const char32_t cp = source.cp;
    const int32_t begin = source.begin;
    const int32_t end = source.end;
    if (cp < 0x80) {
      const char32_t c = ascii_[cp];
      if (c != kDrop) {
        out->push_back({c, begin, end, 0});
        run_start = out->size();
      }
      continue;
    }
    if (options_.clean_text) {
      if (cp == 0xFFFD || IsControl(cp)) continue;
      if (IsWhitespace(cp)) {
        out->push_back({U' ', begin, end, 0});
        run_start = out->size();
        continue;
      }
    }
    const bool isolate = options_.handle_chinese_chars && IsChineseChar(cp);
    if (isolate) {
      out->push_back({U' ', begin, end, 0});
      run_start = out->size();
    }
    char32_t lowered[2] = {cp, 0};
    const int num_lowered = options_.lowercase ? ToLower(cp, lowered) : 1;
    for (int k = 0; k < num_lowered; ++k) Emit(lowered[k], begin, end, out, &run_start);
    if (isolate) {
      out->push_back({U' ', begin, end, 0});
      run_start = out->size();
    }
  }
}

void BertNormalizer::Emit(char32_t cp, int32_t begin, int32_t end, std::vector<NormChar>* out,
                          size_t* run_start) const {
  if (!options_.strip_accents) {
    out->push_back({cp, begin, end, 0});
    return;
  }
  // Lower-casing before or after NFD + strip gives the same result for every
  // code point (checked by unicode_test), so this order matches both
  // transformers.js and the Rust crate.
  char32_t decomposed[kMaxDecomposition];
  const int n = DecomposeNfd(cp, decomposed, kMaxDecomposition);
  for (int k = 0; k < n; ++k) {
    const char32_t c = decomposed[k];
    const uint8_t ccc = CombiningClass(c);
    if (IsNonSpacingMark(c)) {
      // Dropped, but a starter still ends the reordering run.
      if (ccc == 0) *run_start = out->size();
      continue;
    }
    out->push_back({c, begin, end, ccc});
    if (ccc == 0) {
      *run_start = out->size();
      continue;
    }
    // Canonical ordering: a stable insertion by combining class within the run.
    for (size_t j = out->size() - 1; j > *run_start && (*out)[j - 1].ccc > ccc; --j) {
      std::swap((*out)[j - 1], (*out)[j]);
    }
  }
}

}  // namespace engine::tokenizer
