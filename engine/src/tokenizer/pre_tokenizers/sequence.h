// Hugging Face's pre_tokenizers.Sequence: each step applied to the words of the last.
#pragma once

#include <memory>
#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"

namespace engine::tokenizer {

class PreTokenizerSequence : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}

  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override {
    for (const auto& step : steps_) step->PreTokenize(chars, words);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace engine::tokenizer
