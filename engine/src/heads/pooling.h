// Pooling of one sequence's last hidden states into one vector.
#pragma once

#include <cstdint>

#include "engine/encoder.h"
#include "layers/weights.h"

namespace engine {

// Pools tokens [skip, tokens) of `states` with `mode` (not kNone or
// kPooler) into `out`, as sentence-transformers' Pooling does with the first
// `skip` positions of the attention mask cleared: kCls takes the first kept
// token (token `skip`), kWeightedMean keeps each token's absolute position weight, and with no
// token left the means give zeros, kMax gives -1e9 and kLastToken token 0's
// state times 0.
void PoolTokens(Pooling mode, const float* states, int64_t tokens, int64_t skip, int64_t hidden,
                float* out);
void MeanPool(const float* states, int64_t tokens, int64_t hidden, float* out);
// BERT's pooler head: out = tanh(W * cls + b).
void PoolerHead(const PoolerWeights& pooler, const float* cls, int64_t hidden, float* out);

}  // namespace engine
