// BERT embeddings: word + position + token type, then LayerNorm.
#pragma once

#include "absl/types/span.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "layers/packed_batch.h"
#include "model/weights.h"

namespace engine {

// Writes the normalized embeddings of every token of `batch` to `out`
// ([tokens, H]). Positions restart at 0 for each sequence. Inputs are
// assumed validated (ids and types in range).
void EmbedTokens(const EmbeddingWeights& weights, const ModelConfig& config,
                 absl::Span<const Sequence> batch, const PackedBatch& packed, float* out);

}  // namespace engine
