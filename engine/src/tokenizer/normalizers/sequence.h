// Hugging Face's normalizers.Sequence: each normalizer applied to the output of the last.
#pragma once

#include <memory>
#include <vector>

#include "normalizers/normalizer.h"

namespace engine::tokenizer {

class NormalizerSequence : public Normalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}

  void Normalize(std::vector<NormChar>* chars) const override {
    for (const auto& step : steps_) step->Normalize(chars);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace engine::tokenizer
