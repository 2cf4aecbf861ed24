// The encoder's layers over a packed batch. The order of operations of a
// layer, in either LayerNorm placement, is written once (RunEncoderLayers
// in encoder_layer.cc); a precision policy (layers/precision_policy.h)
// says how a sublayer's matmuls run and how their output reaches the fused
// Add & Norm, so fp32 and int8 share it.
#pragma once

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "layers/packed_batch.h"
#include "layers/weights.h"
#include "layers/workspace.h"

namespace engine {

// Runs every layer of `weights` over the embeddings in workspace.hidden.
// Post-LN (BERT): x = LN1(x + Attn(x)); x = LN2(x + FFN(x)).
// Pre-LN: x = x + Attn(LN1(x)); x = x + FFN(LN2(x)), then the final LN.
// With output norms (Gemma): x = x + N(Attn(LN1(x))); x = x + N'(FFN(LN2(x))).
// RMSNorm in place of LayerNorm where the config says so.
// Returns the buffer holding the last hidden states (workspace.hidden
// post-LN, workspace.normed pre-LN): every token's with rows kAll, else one
// row per sequence, its first or last token (engine/token_rows.h: the last
// layer attends over all rows, then runs the rest on the kept rows only).
// `between_layers` (may be empty) runs after each layer but the last
// (Encoder::Encode).
absl::StatusOr<const float*> RunEncoderLayers(ModelWeights& weights, Precision precision,
                                              const ModelConfig& config, const PackedBatch& packed,
                                              TokenRows rows, Workspace& workspace,
                                              const BetweenLayers& between_layers);

}  // namespace engine
