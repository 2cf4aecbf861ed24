#include "pre_tokenizer.h"

#include <array>

#include "unicode.h"

namespace engine::tokenizer {
namespace {

CharClass ClassifySlow(char32_t cp) {
  if (IsWhitespace(cp)) return CharClass::kSpace;
  if (IsPunctuation(cp)) return CharClass::kPunct;
  return CharClass::kWord;
}

}  // namespace

CharClass Classify(char32_t cp) {
  static const std::array<CharClass, 128> ascii = [] {
    std::array<CharClass, 128> table;
    for (char32_t c = 0; c < 128; ++c) table[c] = ClassifySlow(c);
    return table;
  }();
  return cp < 128 ? ascii[cp] : ClassifySlow(cp);
}

}  // namespace engine::tokenizer
