// Hugging Face's BertPreTokenizer: words end at whitespace (dropped) and every
// punctuation character is a word of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"

namespace engine::tokenizer {

enum class CharClass : uint8_t { kWord, kSpace, kPunct };

CharClass Classify(char32_t cp);

class BertPreTokenizer : public PreTokenizer {
 public:
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;
};

}  // namespace engine::tokenizer
