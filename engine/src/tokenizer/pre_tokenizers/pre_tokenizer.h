// A pre-tokenizer cuts the normalized text into words (Hugging Face's
// `pre_tokenizers`); some also rewrite characters (Metaspace, ByteLevel).
#pragma once

#include <vector>

#include "normalized_text.h"

namespace engine::tokenizer {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Thread-safe. On entry *words are the current words of *chars (in order,
  // not overlapping); on return the words after this step. May rewrite *chars
  // (then *words refer to the new buffer).
  virtual void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const = 0;
};

}  // namespace engine::tokenizer
