// Added (special) tokens such as [CLS] or [MASK] are cut out of the text before
// normalization, leftmost-longest, as Hugging Face's AddedVocabulary does
// (token_matcher.h finds them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool normalized = false;   // matched in the normalized text instead of the input
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only where no word character touches it
};

}  // namespace engine::tokenizer
