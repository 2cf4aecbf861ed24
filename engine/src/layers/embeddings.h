// Token embeddings: word + position (+ token type), then LayerNorm, then
// (ELECTRA) the projection to the hidden width. Positions follow the
// model's rule (ModelConfig::position_ids), restarting for each sequence.
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "layers/packed_batch.h"
#include "layers/weights.h"

namespace engine {

// Writes the embeddings of every token of `batch` to `out` ([tokens, H]).
// With a projection, `scratch` holds the [tokens, E] embeddings before it
// (BucketRows(tokens) rows). Inputs are assumed validated (ids and types
// in range).
absl::Status EmbedTokens(const EmbeddingWeights& weights, const ModelConfig& config,
                         absl::Span<const Sequence> batch, const PackedBatch& packed,
                         float* scratch, float* out);

}  // namespace engine
