#include "layers/encoder_layer.h"

#include "kernels/kernels.h"
#include "layers/attention.h"

namespace engine {
namespace {

// sublayer_out + bias added to the residual, normalized with `norm`.
void AddAndNorm(const float* residual, const float* sublayer_out, const std::vector<float>& bias,
                const LayerNormWeights& norm, const ModelConfig& config, int64_t tokens, float* out,
                float* residual_out) {
  kernels::AddLayerNormArgs args;
  args.residual = residual;
  args.sublayer = sublayer_out;
  args.bias = bias.data();
  args.gamma = norm.gamma.data();
  args.beta = norm.beta.data();
  args.eps = config.layer_norm_eps;
  args.rows = tokens;
  args.hidden = config.hidden_size;
  args.out = out;
  args.residual_out = residual_out;
  kernels::AddLayerNorm(args);
}

// Attention sublayer up to its output projection: input -> workspace.sublayer.
absl::Status AttentionSublayer(LayerWeights& layer, const ModelConfig& config,
                               const PackedBatch& packed, const float* input,
                               Workspace& workspace) {
  if (absl::Status s = layer.qkv->Forward(input, packed.tokens, workspace.qkv.data()); !s.ok()) {
    return s;
  }
  SelfAttention(workspace.qkv.data(), packed, config.num_heads, config.head_size(), workspace,
                workspace.context.data());
  return layer.attention_out->Forward(workspace.context.data(), packed.tokens,
                                      workspace.sublayer.data());
}

// Feed-forward sublayer without its output bias: input -> workspace.sublayer.
absl::Status FeedForwardSublayer(LayerWeights& layer, const PackedBatch& packed, const float* input,
                                 Workspace& workspace) {
  if (absl::Status s = layer.ffn_in->Forward(input, packed.tokens, workspace.intermediate.data());
      !s.ok()) {
    return s;
  }
  return layer.ffn_out->Forward(workspace.intermediate.data(), packed.tokens,
                                workspace.sublayer.data());
}

}  // namespace

absl::Status RunPostLnLayer(LayerWeights& layer, const ModelConfig& config,
                            const PackedBatch& packed, Workspace& workspace) {
  float* x = workspace.hidden.data();
  if (absl::Status s = AttentionSublayer(layer, config, packed, x, workspace); !s.ok()) return s;
  AddAndNorm(x, workspace.sublayer.data(), layer.attention_out_bias, layer.attention_norm, config,
             packed.tokens, x, nullptr);
  if (absl::Status s = FeedForwardSublayer(layer, packed, x, workspace); !s.ok()) return s;
  AddAndNorm(x, workspace.sublayer.data(), layer.ffn_out_bias, layer.ffn_norm, config,
             packed.tokens, x, nullptr);
  return absl::OkStatus();
}

absl::Status RunPreLnLayer(LayerWeights& layer, const LayerNormWeights& next_norm,
                           const ModelConfig& config, const PackedBatch& packed,
                           Workspace& workspace) {
  float* x = workspace.hidden.data();
  float* normed = workspace.normed.data();
  if (absl::Status s = AttentionSublayer(layer, config, packed, normed, workspace); !s.ok()) {
    return s;
  }
  // x += attention; normed = LN2(x), in one sweep.
  AddAndNorm(x, workspace.sublayer.data(), layer.attention_out_bias, layer.ffn_norm, config,
             packed.tokens, normed, x);
  if (absl::Status s = FeedForwardSublayer(layer, packed, normed, workspace); !s.ok()) return s;
  AddAndNorm(x, workspace.sublayer.data(), layer.ffn_out_bias, next_norm, config, packed.tokens,
             normed, x);
  return absl::OkStatus();
}

}  // namespace engine
