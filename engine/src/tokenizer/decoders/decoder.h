// A decoder turns the tokens of ids back into text pieces (Hugging Face's
// `decoders`, their decode_chain): the pieces are then concatenated.
#pragma once

#include <string>
#include <vector>

namespace engine::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Thread-safe; rewrites the token strings in place (may change their number).
  virtual void DecodeChain(std::vector<std::string>* tokens) const = 0;
};

}  // namespace engine::tokenizer
