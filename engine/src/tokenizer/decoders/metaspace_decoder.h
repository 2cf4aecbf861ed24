// Hugging Face's Metaspace decoder: the replacement character becomes a space,
// except in the first token when a prefix was prepended (then it is dropped).
#pragma once

#include <string>
#include <vector>

#include "decoders/decoder.h"

namespace engine::tokenizer {

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(char32_t replacement, bool prepended)
      : replacement_(replacement), prepended_(prepended) {}
  void DecodeChain(std::vector<std::string>* tokens) const override;

 private:
  char32_t replacement_;
  bool prepended_;  // prepend_scheme is not "never"
};

}  // namespace engine::tokenizer
