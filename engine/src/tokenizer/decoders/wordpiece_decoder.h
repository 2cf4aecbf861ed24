// Hugging Face's WordPiece decoder: continuation pieces lose their prefix and
// join the previous token, other tokens get a space; `cleanup` undoes BERT's
// spacing around punctuation and English contractions.
#pragma once

#include <string>
#include <vector>

#include "decoders/decoder.h"

namespace engine::tokenizer {

class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup)
      : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void DecodeChain(std::vector<std::string>* tokens) const override;

 private:
  std::string prefix_;
  bool cleanup_;
};

// The Rust crate's decoders::wordpiece::cleanup.
std::string CleanUpTokenization(std::string text);

}  // namespace engine::tokenizer
