#include "pre_tokenizers/bert_pre_tokenizer.h"

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

void BertPreTokenizer::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  thread_local std::vector<Span> out;
  out.clear();
  for (const Span w : *words) {
    uint32_t start = w.begin;
    for (uint32_t i = w.begin; i < w.end; ++i) {
      const CharClass c = Classify((*chars)[i].cp);
      if (c == CharClass::kWord) continue;
      if (start < i) out.push_back({start, i});
      if (c == CharClass::kPunct) out.push_back({i, i + 1});
      start = i + 1;
    }
    if (start < w.end) out.push_back({start, w.end});
  }
  words->swap(out);
}

}  // namespace engine::tokenizer
