// Hugging Face's BertPreTokenizer: words end at whitespace (dropped) and every
// punctuation character is a word of its own.
#pragma once

#include <cstddef>

#include "normalizer.h"

namespace engine::tokenizer {

enum class CharClass : uint8_t { kWord, kSpace, kPunct };

CharClass Classify(char32_t cp);

// Calls on_word(begin, end) for each word in chars[from, to), in order.
template <typename OnWord>
void SplitWords(const std::vector<NormChar>& chars, size_t from, size_t to, OnWord&& on_word) {
  size_t start = from;
  for (size_t i = from; i < to; ++i) {
    const CharClass c = Classify(chars[i].cp);
    if (c == CharClass::kWord) continue;
    if (start < i) on_word(start, i);
    if (c == CharClass::kPunct) on_word(i, i + 1);
    start = i + 1;
  }
  if (start < to) on_word(start, to);
}

}  // namespace engine::tokenizer
