// A normalizer rewrites the characters of one segment of text (Hugging Face's
// `normalizers`); each output character keeps the input bytes it came from.
#pragma once

#include <vector>

#include "normalized_text.h"

namespace engine::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Thread-safe; replaces *chars with the normalized characters.
  virtual void Normalize(std::vector<NormChar>* chars) const = 0;
};

}  // namespace engine::tokenizer
