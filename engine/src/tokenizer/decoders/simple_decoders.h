// Hugging Face's small decoders: ByteFallback (runs of <0xXX> tokens become
// their UTF-8, U+FFFD per invalid byte run), Fuse (all tokens into one),
// Strip (drops `content` up to `start` times at the front and `stop` at the
// back of each token), Replace (a literal pattern in each token), Sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "decoders/decoder.h"

namespace engine::tokenizer {

class ByteFallbackDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override;
};

class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override;
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, int start, int stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>* tokens) const override;

 private:
  std::string content_;  // one character
  int start_;
  int stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(std::string pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override;

 private:
  std::string pattern_;
  std::string content_;
};

class DecoderSequence : public Decoder {
 public:
  explicit DecoderSequence(std::vector<std::unique_ptr<Decoder>> steps)
      : steps_(std::move(steps)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (const auto& step : steps_) step->DecodeChain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace engine::tokenizer
