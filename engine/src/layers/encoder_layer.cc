#include "layers/encoder_layer.h"

#include "kernels/kernels.h"
#include "layers/attention.h"
#include "profile.h"

namespace engine {
namespace {

using profile::Op;
using profile::ScopedOp;

// sublayer_out + bias added to the residual, normalized with `norm`.
void AddAndNorm(const float* residual, const float* sublayer_out, const std::vector<float>& bias,
                const LayerNormWeights& norm, const ModelConfig& config, int64_t tokens, float* out,
                float* residual_out) {
  ScopedOp op(Op::kAddNorm);
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

absl::Status Matmul(Dense& dense, const float* x, int64_t rows, float* y) {
  ScopedOp op(Op::kMatmul);
  return dense.Forward(x, rows, y);
}

// Attention sublayer up to its output projection: input -> workspace.sublayer.
absl::Status AttentionSublayer(LayerWeights& layer, const ModelConfig& config,
                               const PackedBatch& packed, const float* input,
                               Workspace& workspace) {
  if (absl::Status s = Matmul(*layer.qkv, input, packed.tokens, workspace.qkv.data()); !s.ok()) {
    return s;
  }
  SelfAttention(workspace.qkv.data(), packed, config.num_heads, config.head_size(), workspace,
                workspace.context.data());
  return Matmul(*layer.attention_out, workspace.context.data(), packed.tokens,
                workspace.sublayer.data());
}

// Feed-forward sublayer without its output bias: input -> workspace.sublayer.
absl::Status FeedForwardSublayer(LayerWeights& layer, const PackedBatch& packed, const float* input,
                                 Workspace& workspace) {
  if (absl::Status s = Matmul(*layer.ffn_in, input, packed.tokens, workspace.intermediate.data());
      !s.ok()) {
    return s;
  }
  return Matmul(*layer.ffn_out, workspace.intermediate.data(), packed.tokens,
                workspace.sublayer.data());
}

// ---- int8 ----

// The workspace's row-quantized matmul input (and, after each epilogue, the
// next matmul's).
kernels::QuantizedRows QuantizedInput(const Workspace& ws) {
  return {ws.quantized_u8(), ws.row_scale.data(), ws.row_zero_s32()};
}

// The workspace's accumulator as the output of `dense` on QuantizedInput.
kernels::Int8Accumulator Accumulator(const Workspace& ws, const QuantizedDense& dense,
                                     const std::vector<float>& bias) {
  kernels::Int8Accumulator a;
  a.acc = ws.accumulator_s32();
  a.row_scale = ws.row_scale.data();
  a.row_zero = ws.row_zero_s32();
  a.col_scale = dense.col_scale();
  a.col_sum = dense.col_sum();
  a.bias = bias.data();
  return a;
}

// workspace.accumulator = QuantizedInput * W^T.
absl::Status MatmulInt8(QuantizedDense& dense, int64_t rows, Workspace& ws) {
  ScopedOp op(Op::kMatmul);
  return dense.Forward(ws.quantized_u8(), rows, ws.accumulator_s32());
}

kernels::Eltwise ToEltwise(Activation activation) {
  switch (activation) {
    case Activation::kGeluErf:
      return kernels::Eltwise::kGeluErf;
    case Activation::kGeluTanh:
      return kernels::Eltwise::kGeluTanh;
    case Activation::kRelu:
      return kernels::Eltwise::kRelu;
  }
  return kernels::Eltwise::kNone;
}

// Attention from the quantized input to the output projection's accumulator.
absl::Status AttentionSublayerInt8(LayerWeights& layer, const ModelConfig& config,
                                   const PackedBatch& packed, Workspace& ws) {
  if (absl::Status s = MatmulInt8(*layer.qkv_int8, packed.tokens, ws); !s.ok()) return s;
  {
    // Attention itself runs in float.
    ScopedOp op(Op::kDequantize);
    kernels::Dequantize(Accumulator(ws, *layer.qkv_int8, layer.qkv_bias), packed.tokens,
                        3 * config.hidden_size, ws.qkv.data());
  }
  SelfAttention(ws.qkv.data(), packed, config.num_heads, config.head_size(), ws, ws.context.data());
  {
    ScopedOp op(Op::kQuantize);
    kernels::QuantizeRows(ws.context.data(), packed.tokens, config.hidden_size, QuantizedInput(ws));
  }
  return MatmulInt8(*layer.attention_out_int8, packed.tokens, ws);
}

// Feed-forward from the quantized input to the output projection's accumulator.
absl::Status FeedForwardSublayerInt8(LayerWeights& layer, const ModelConfig& config,
                                     const PackedBatch& packed, Workspace& ws) {
  if (absl::Status s = MatmulInt8(*layer.ffn_in_int8, packed.tokens, ws); !s.ok()) return s;
  {
    ScopedOp op(Op::kGelu);
    kernels::DequantizeActivateQuantize(Accumulator(ws, *layer.ffn_in_int8, layer.ffn_in_bias),
                                        packed.tokens, config.intermediate_size,
                                        ToEltwise(config.activation), QuantizedInput(ws));
  }
  return MatmulInt8(*layer.ffn_out_int8, packed.tokens, ws);
}

// Add & Norm of the accumulator of `dense` (+ bias), the output also
// quantized for the next matmul.
void AddAndNormInt8(const float* residual, const QuantizedDense& dense,
                    const std::vector<float>& bias, const LayerNormWeights& norm,
                    const ModelConfig& config, int64_t tokens, float* out, float* residual_out,
                    Workspace& ws) {
  ScopedOp op(Op::kAddNorm);
  kernels::AddLayerNormInt8Args args;
  args.residual = residual;
  args.sublayer = Accumulator(ws, dense, bias);
  args.gamma = norm.gamma.data();
  args.beta = norm.beta.data();
  args.eps = config.layer_norm_eps;
  args.rows = tokens;
  args.hidden = config.hidden_size;
  args.out = out;
  args.residual_out = residual_out;
  args.quantized = QuantizedInput(ws);
  kernels::AddLayerNormInt8(args);
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

absl::Status RunPostLnLayerInt8(LayerWeights& layer, const ModelConfig& config,
                                const PackedBatch& packed, Workspace& ws) {
  float* x = ws.hidden.data();
  if (absl::Status s = AttentionSublayerInt8(layer, config, packed, ws); !s.ok()) return s;
  AddAndNormInt8(x, *layer.attention_out_int8, layer.attention_out_bias, layer.attention_norm,
                 config, packed.tokens, x, nullptr, ws);
  if (absl::Status s = FeedForwardSublayerInt8(layer, config, packed, ws); !s.ok()) return s;
  AddAndNormInt8(x, *layer.ffn_out_int8, layer.ffn_out_bias, layer.ffn_norm, config, packed.tokens,
                 x, nullptr, ws);
  return absl::OkStatus();
}

absl::Status RunPreLnLayerInt8(LayerWeights& layer, const LayerNormWeights& next_norm,
                               const ModelConfig& config, const PackedBatch& packed,
                               Workspace& ws) {
  float* x = ws.hidden.data();
  float* normed = ws.normed.data();
  if (absl::Status s = AttentionSublayerInt8(layer, config, packed, ws); !s.ok()) return s;
  AddAndNormInt8(x, *layer.attention_out_int8, layer.attention_out_bias, layer.ffn_norm, config,
                 packed.tokens, normed, x, ws);
  if (absl::Status s = FeedForwardSublayerInt8(layer, config, packed, ws); !s.ok()) return s;
  AddAndNormInt8(x, *layer.ffn_out_int8, layer.ffn_out_bias, next_norm, config, packed.tokens,
                 normed, x, ws);
  return absl::OkStatus();
}

void QuantizePostLnInput(const ModelConfig& config, const PackedBatch& packed, Workspace& ws) {
  ScopedOp op(Op::kQuantize);
  kernels::QuantizeRows(ws.hidden.data(), packed.tokens, config.hidden_size, QuantizedInput(ws));
}

void NormalizePreLnInputInt8(const LayerNormWeights& first_norm, const ModelConfig& config,
                             const PackedBatch& packed, Workspace& ws) {
  ScopedOp op(Op::kAddNorm);
  kernels::AddLayerNormInt8Args args;
  args.residual = ws.hidden.data();
  args.gamma = first_norm.gamma.data();
  args.beta = first_norm.beta.data();
  args.eps = config.layer_norm_eps;
  args.rows = packed.tokens;
  args.hidden = config.hidden_size;
  args.out = ws.normed.data();
  args.quantized = QuantizedInput(ws);
  kernels::AddLayerNormInt8(args);
}

}  // namespace engine
