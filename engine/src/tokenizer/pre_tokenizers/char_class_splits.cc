#include "pre_tokenizers/char_class_splits.h"

#include <unicode/uchar.h>

#include "unicode.h"

namespace engine::tokenizer {
namespace {

bool IsPunct(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

template <typename Pred>
void SplitEach(std::vector<NormChar>* chars, std::vector<Span>* words, Pred is_delimiter,
               SplitBehavior behavior) {
  thread_local std::vector<Span> out;
  thread_local std::vector<std::pair<Span, bool>> pieces;
  out.clear();
  for (const Span w : *words) {
    CharPieces(*chars, w, is_delimiter, &pieces);
    ApplySplitBehavior(pieces, behavior, &out);
  }
  words->swap(out);
}

}  // namespace

void WhitespacePreTokenizer::PreTokenize(std::vector<NormChar>* chars,
                                         std::vector<Span>* words) const {
  thread_local std::vector<Span> out;
  out.clear();
  for (const Span w : *words) {
    for (uint32_t i = w.begin; i < w.end;) {
      const char32_t c = (*chars)[i].cp;
      if (IsWhitespace(c)) {
        ++i;
        continue;
      }
      const bool word = IsWordChar(c);
      uint32_t j = i + 1;
      while (j < w.end && !IsWhitespace((*chars)[j].cp) && IsWordChar((*chars)[j].cp) == word) ++j;
      out.push_back({i, j});
      i = j;
    }
  }
  words->swap(out);
}

void Punctuation::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  SplitEach(chars, words, IsPunct, behavior_);
}

void Digits::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  SplitEach(chars, words, IsNumber,
            individual_ ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
}

}  // namespace engine::tokenizer
