#include "pre_tokenizers/metaspace.h"

namespace engine::tokenizer {

void Metaspace::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  thread_local std::vector<NormChar> out_chars;
  thread_local std::vector<Span> out_words;
  out_chars.clear();
  out_words.clear();
  for (const Span w : *words) {
    if (w.begin == w.end) continue;
    const auto word_begin = static_cast<uint32_t>(out_chars.size());
    const NormChar& first = (*chars)[w.begin];
    // "first" prepends only to the word that starts the input (the Rust
    // crate checks the word's original offset).
    const bool prepend = first.cp != replacement_ && first.cp != U' ' &&
                         (scheme_ == PrependScheme::kAlways ||
                          (scheme_ == PrependScheme::kFirst && first.begin == 0));
    // The prepended character stands for the word's first one (its offsets).
    if (prepend) out_chars.push_back({replacement_, first.begin, first.end, 0});
    for (uint32_t i = w.begin; i < w.end; ++i) {
      NormChar c = (*chars)[i];
      if (c.cp == U' ') c.cp = replacement_;
      out_chars.push_back(c);
    }
    const auto word_end = static_cast<uint32_t>(out_chars.size());
    if (!split_) {
      out_words.push_back({word_begin, word_end});
      continue;
    }
    // Each replacement character opens a new word (MergedWithNext).
    uint32_t start = word_begin;
    for (uint32_t i = word_begin + 1; i < word_end; ++i) {
      if (out_chars[i].cp != replacement_) continue;
      out_words.push_back({start, i});
      start = i;
    }
    out_words.push_back({start, word_end});
  }
  chars->swap(out_chars);
  words->swap(out_words);
}

}  // namespace engine::tokenizer
