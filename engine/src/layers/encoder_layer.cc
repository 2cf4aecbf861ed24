#include "layers/encoder_layer.h"

#include "layers/precision_policy.h"

namespace engine {
namespace {

// Every residual add and LayerNorm is one fused Add & Norm sweep. Post-LN
// updates workspace.hidden in place. Pre-LN keeps the residual in hidden
// and each sublayer's input in normed: the Add & Norm after a sublayer
// writes the new residual and the next sublayer's normalized input (the
// next layer's LN1 or the final LN) in one sweep.
template <class Policy>
absl::Status RunLayers(Policy& policy, ModelWeights& weights, const ModelConfig& config,
                       Workspace& ws, const BetweenLayers& between_layers) {
  const bool post = config.layer_norm_placement == LayerNormPlacement::kPost;
  float* x = ws.hidden.data();
  float* input = post ? x : ws.normed.data();
  float* residual_out = post ? nullptr : x;
  policy.PrepareInput(post ? nullptr : &weights.layers[0].attention_norm);
  for (size_t l = 0; l < weights.layers.size(); ++l) {
    LayerWeights& layer = weights.layers[l];
    if (absl::Status s = policy.Attention(layer, input); !s.ok()) return s;
    policy.AddNorm(x, layer.attention_out, post ? layer.attention_norm : layer.ffn_norm, input,
                   residual_out, layer.attention_out_norm);
    if (absl::Status s = policy.FeedForward(layer, input); !s.ok()) return s;
    const LayerNormWeights& next = post ? layer.ffn_norm
                                   : l + 1 < weights.layers.size()
                                       ? weights.layers[l + 1].attention_norm
                                       : weights.final_norm;
    policy.AddNorm(x, layer.ffn_out, next, input, residual_out, layer.ffn_out_norm);
    const int done = static_cast<int>(l + 1), layers = static_cast<int>(weights.layers.size());
    if (between_layers && done < layers) between_layers(done, layers);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<const float*> RunEncoderLayers(ModelWeights& weights, Precision precision,
                                              const ModelConfig& config, const PackedBatch& packed,
                                              Workspace& workspace,
                                              const BetweenLayers& between_layers) {
  const LayerContext context{config, packed, workspace, weights.relative_position, weights.rotary};
  absl::Status status;
  if (precision == Precision::kInt8) {
    Int8Policy policy(context);
    status = RunLayers(policy, weights, config, workspace, between_layers);
  } else if (precision == Precision::kBf16) {
    Bf16Policy policy(context);
    status = RunLayers(policy, weights, config, workspace, between_layers);
  } else {
    FloatPolicy policy(context);
    status = RunLayers(policy, weights, config, workspace, between_layers);
  }
  if (!status.ok()) return status;
  return config.layer_norm_placement == LayerNormPlacement::kPost
             ? static_cast<const float*>(workspace.hidden.data())
             : static_cast<const float*>(workspace.normed.data());
}

}  // namespace engine
