// Pooling of one sequence's last hidden states into one vector.
#pragma once

#include <cstdint>

#include "model/weights.h"

namespace engine {

void MeanPool(const float* states, int64_t tokens, int64_t hidden, float* out);
// BERT's pooler head: out = tanh(W * cls + b).
void PoolerHead(const PoolerWeights& pooler, const float* cls, int64_t hidden, float* out);

}  // namespace engine
