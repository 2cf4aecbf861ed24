#include <algorithm>
#include <cmath>

#include "engine/heads.h"

namespace engine {

const char* ScoreActivationName(ScoreActivation activation) {
  switch (activation) {
    case ScoreActivation::kIdentity:
      return "identity";
    case ScoreActivation::kSigmoid:
      return "sigmoid";
    case ScoreActivation::kSoftmax:
      return "softmax";
  }
  return "?";
}

void ApplyScoreActivation(ScoreActivation activation, float* values, int n) {
  if (n <= 0) return;
  switch (activation) {
    case ScoreActivation::kIdentity:
      return;
    case ScoreActivation::kSigmoid:
      for (int i = 0; i < n; ++i) values[i] = 1.0f / (1.0f + std::exp(-values[i]));
      return;
    case ScoreActivation::kSoftmax: {
      const float max = *std::max_element(values, values + n);
      double sum = 0.0;
      for (int i = 0; i < n; ++i) {
        values[i] = std::exp(values[i] - max);
        sum += values[i];
      }
      for (int i = 0; i < n; ++i) values[i] = static_cast<float>(values[i] / sum);
      return;
    }
  }
}

}  // namespace engine
