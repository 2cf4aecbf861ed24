// One Transformer encoder layer over a packed batch, in either LayerNorm
// placement. Every residual add and LayerNorm is one fused Add & Norm sweep.
#pragma once

#include "absl/status/status.h"
#include "engine/config.h"
#include "layers/packed_batch.h"
#include "model/weights.h"
#include "workspace.h"

namespace engine {

// Post-LN (BERT): workspace.hidden holds x and is updated in place:
//   x = LN1(x + Attn(x)); x = LN2(x + FFN(x)).
absl::Status RunPostLnLayer(LayerWeights& layer, const ModelConfig& config,
                            const PackedBatch& packed, Workspace& workspace);

// Pre-LN: workspace.hidden holds the residual x and workspace.normed holds
// this layer's LN1(x) on entry. On exit hidden holds
// x' = x + Attn(LN1(x)); x'' = x' + FFN(LN2(x')) and normed holds
// next_norm(x''), the next layer's LN1 or the final LayerNorm.
absl::Status RunPreLnLayer(LayerWeights& layer, const LayerNormWeights& next_norm,
                           const ModelConfig& config, const PackedBatch& packed,
                           Workspace& workspace);

// Precision::kInt8: the same layers with the int8 weights (LayerWeights'
// *_int8) and epilogues. Besides the float state above, each layer expects
// its first matmul's input quantized per row in workspace.quantized /
// row_scale / row_zero (post-LN: hidden, pre-LN: normed), and leaves the next
// layer's there, fused into its last Add & Norm.
absl::Status RunPostLnLayerInt8(LayerWeights& layer, const ModelConfig& config,
                                const PackedBatch& packed, Workspace& workspace);
absl::Status RunPreLnLayerInt8(LayerWeights& layer, const LayerNormWeights& next_norm,
                               const ModelConfig& config, const PackedBatch& packed,
                               Workspace& workspace);

// The int8 layers' entry state from the embeddings in workspace.hidden.
// Post-LN: hidden quantized. Pre-LN: normed = first_norm(hidden), quantized
// in the same sweep.
void QuantizePostLnInput(const ModelConfig& config, const PackedBatch& packed,
                         Workspace& workspace);
void NormalizePreLnInputInt8(const LayerNormWeights& first_norm, const ModelConfig& config,
                             const PackedBatch& packed, Workspace& workspace);

}  // namespace engine
