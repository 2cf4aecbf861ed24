#include "normalizers/simple_normalizers.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "unicode.h"

namespace engine::tokenizer {

void Lowercase::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<NormChar> out;
  out.clear();
  for (const NormChar& c : *chars) {
    char32_t lower[2];
    const int n = ToLower(c.cp, lower);
    for (int k = 0; k < n; ++k) out.push_back({lower[k], c.begin, c.end, 0});
  }
  chars->swap(out);
}

void Strip::Normalize(std::vector<NormChar>* chars) const {
  size_t b = 0;
  size_t e = chars->size();
  while (left_ && b < e && IsWhitespace((*chars)[b].cp)) ++b;
  while (right_ && e > b && IsWhitespace((*chars)[e - 1].cp)) --e;
  chars->erase(chars->begin() + e, chars->end());
  chars->erase(chars->begin(), chars->begin() + b);
}

void StripAccents::Normalize(std::vector<NormChar>* chars) const {
  chars->erase(std::remove_if(chars->begin(), chars->end(),
                              [](const NormChar& c) {
                                return (U_GET_GC_MASK(static_cast<UChar32>(c.cp)) & U_GC_M_MASK) !=
                                       0;
                              }),
               chars->end());
}

void Prepend::Normalize(std::vector<NormChar>* chars) const {
  if (chars->empty()) return;
  // The prefix stands for the first character (its offsets), as in the Rust crate.
  const NormChar first = chars->front();
  std::vector<NormChar> prefix;
  for (const char32_t c : prefix_) prefix.push_back({c, first.begin, first.end, 0});
  chars->insert(chars->begin(), prefix.begin(), prefix.end());
}

}  // namespace engine::tokenizer
