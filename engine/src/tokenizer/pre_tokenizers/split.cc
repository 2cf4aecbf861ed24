#include "pre_tokenizers/split.h"

namespace engine::tokenizer {

void Split::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  thread_local std::vector<Span> out;
  thread_local std::vector<std::pair<size_t, size_t>> matches;
  thread_local std::vector<std::pair<Span, bool>> pieces;
  out.clear();
  for (const Span w : *words) {
    pattern_.FindMatches(*chars, w.begin, w.end, &matches);
    pieces.clear();
    uint32_t gap = w.begin;
    for (const auto& [b, e] : matches) {
      if (gap < b) pieces.push_back({{gap, static_cast<uint32_t>(b)}, invert_});
      pieces.push_back({{static_cast<uint32_t>(b), static_cast<uint32_t>(e)}, !invert_});
      gap = static_cast<uint32_t>(e);
    }
    if (gap < w.end) pieces.push_back({{gap, w.end}, invert_});
    ApplySplitBehavior(pieces, behavior_, &out);
  }
  words->swap(out);
}

}  // namespace engine::tokenizer
