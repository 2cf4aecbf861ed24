#include "pre_tokenizers/whitespace_split.h"

#include "unicode.h"

namespace engine::tokenizer {

void WhitespaceSplit::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  thread_local std::vector<Span> out;
  out.clear();
  for (const Span w : *words) {
    uint32_t start = w.begin;
    for (uint32_t i = w.begin; i < w.end; ++i) {
      if (!IsWhitespace((*chars)[i].cp)) continue;
      if (start < i) out.push_back({start, i});
      start = i + 1;
    }
    if (start < w.end) out.push_back({start, w.end});
  }
  words->swap(out);
}

}  // namespace engine::tokenizer
