// How a layer's sublayers run in each precision. Both policies offer:
//   PrepareInput(first_norm)  the embeddings in workspace.hidden become the
//                             first layer's input (pre-LN: normed = LN(hidden),
//                             or a copy where that norm is an identity)
//   Attend(layer, input, query_rows)
//                             Q|K|V and attention (rotary positions inside):
//                             the context in workspace.context (of the
//                             query_rows token of each sequence only, when
//                             not kAll)
//   ProjectContext(layer)     the attention output projection of the context
//   FeedForward(layer, input) FFN in + activation (or gate), FFN out
//   AddNorm(residual, producer, norm, out, residual_out, output_norm)
//                             out = norm(residual + producer's output + its
//                             bias), and residual_out = the sum when set;
//                             with an output_norm (Gemma), the producer's
//                             output + bias is normalized by it first.
// The float policy passes activations in float; the int8 policy keeps each
// matmul's input quantized per row in the workspace (so `input` is unused
// there) and fuses the next quantization into every epilogue; the bf16
// policy is the float one with each matmul's input rounded to bf16 (the FFN's
// inner activations come out of their matmul in bf16 already).
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "engine/config.h"
#include "kernels/bf16.h"
#include "kernels/kernels.h"
#include "layers/attention.h"
#include "layers/packed_batch.h"
#include "layers/rotary.h"
#include "layers/weights.h"
#include "layers/workspace.h"
#include "runtime/profile.h"

namespace engine {

struct LayerContext {
  const ModelConfig& config;
  const PackedBatch& packed;
  Workspace& ws;
  const RelativePositionBias& position_bias;
  const std::vector<RotaryTable>& rotary;
};

// The attention core on the float Q|K|V in workspace.qkv (Q and K
// RMS-normalized per head first where the layer has Q/K norms; rotary
// positions, where the layer has them, turned as the kernel reads Q and K);
// the context goes to workspace.context.
inline void AttendInWorkspace(const LayerContext& c, const LayerWeights& layer,
                              TokenRows query_rows) {
  Workspace& ws = c.ws;
  const ModelConfig& config = c.config;
  if (!layer.q_norm.empty()) {
    profile::ScopedOp op(profile::Op::kAddNorm);
    kernels::RmsNormHeadsArgs args;
    args.x = ws.qkv.data();
    args.rows = c.packed.tokens;
    args.stride = config.qkv_width();
    args.head_size = config.head_size();
    args.q_heads = config.num_heads;
    args.k_heads = config.kv_heads();
    args.q_gamma = layer.q_norm.data();
    args.k_gamma = layer.k_norm.data();
    args.eps = config.layer_norm_eps;
    kernels::RmsNormHeads(args);
  }
  SelfAttention(
      ws.qkv.data(), c.packed,
      AttentionShape{
          config.num_heads, config.kv_heads(), config.head_size(),
          config.attention_scale_base > 0 ? 1.0f / std::sqrt(config.attention_scale_base) : 0.0f},
      c.position_bias, layer.rotary >= 0 ? &c.rotary[layer.rotary] : nullptr, layer.band, ws,
      ws.context.data(), query_rows);
}

// The float Add & Norm sweep: out = norm(residual + sublayer + bias), and
// residual_out = the sum when set (null sublayer and bias: the residual
// alone).
inline void AddNormRows(const LayerContext& c, const float* residual, const float* sublayer,
                        const float* bias, const LayerNormWeights& norm, float* out,
                        float* residual_out) {
  kernels::AddLayerNormArgs args;
  args.residual = residual;
  args.sublayer = sublayer;
  args.bias = bias;
  args.gamma = norm.gamma.data();
  args.beta = norm.beta.data();
  args.eps = c.config.layer_norm_eps;
  args.rms = c.config.rms_norm;
  args.rows = c.packed.tokens;
  args.hidden = c.config.hidden_size;
  args.out = out;
  args.residual_out = residual_out;
  kernels::AddLayerNorm(args);
}

// The gated FFN's activation (or the activation of an ungated FFN's
// int8 epilogue) as a kernel's element-wise op.
inline kernels::Eltwise ToEltwise(Activation activation) {
  switch (activation) {
    case Activation::kGeluErf:
      return kernels::Eltwise::kGeluErf;
    case Activation::kGeluTanh:
      return kernels::Eltwise::kGeluTanh;
    case Activation::kRelu:
      return kernels::Eltwise::kRelu;
    case Activation::kSilu:
      return kernels::Eltwise::kSilu;
  }
  return kernels::Eltwise::kNone;
}

// Copies the embeddings to the first layer's input where pre-LN has no
// first norm.
inline void CopyRows(const float* from, int64_t rows, int64_t width, float* to) {
  std::memcpy(to, from, static_cast<size_t>(rows * width) * sizeof(float));
}

class FloatPolicy {
 public:
  explicit FloatPolicy(const LayerContext& c) : c_(c) {}

  void PrepareInput(const LayerNormWeights* first_norm) {
    if (first_norm == nullptr) return;
    if (first_norm->identity()) {
      CopyRows(c_.ws.hidden.data(), c_.packed.tokens, c_.config.hidden_size, c_.ws.normed.data());
      return;
    }
    AddNorm(c_.ws.hidden.data(), nullptr, *first_norm, c_.ws.normed.data(), nullptr);
  }

  absl::Status Attend(LayerWeights& layer, const float* input, TokenRows query_rows) {
    const absl::Status s = query_rows != TokenRows::kAll && layer.kept_qkv.query != nullptr
                               ? ProjectKeptQkv(layer.kept_qkv, input, query_rows)
                               : Matmul(*layer.qkv.fp32, input, c_.ws.qkv.data());
    if (!s.ok()) return s;
    AttendInWorkspace(c_, layer, query_rows);
    return absl::OkStatus();
  }

  absl::Status ProjectContext(LayerWeights& layer) {
    return Matmul(*layer.attention_out.fp32, c_.ws.context.data(), c_.ws.sublayer.data());
  }

  absl::Status FeedForward(LayerWeights& layer, const float* input) {
    Workspace& ws = c_.ws;
    RETURN_IF_ERROR(Matmul(*layer.ffn_in.fp32, input, ws.intermediate.data()));
    return Matmul(*layer.ffn_out.fp32, Gate(ws.intermediate.data()), ws.sublayer.data());
  }

  // Gated FFNs: act(gate) * up of the [tokens, 2I] inner activations, in
  // workspace.gated; otherwise `inner` (the activation is fused).
  const float* Gate(const float* inner) {
    if (!c_.config.gated_ffn) return inner;
    profile::ScopedOp op(profile::Op::kGate);
    kernels::GatedActivation(inner, c_.packed.tokens, c_.config.intermediate_size,
                             ToEltwise(c_.config.activation), c_.ws.gated.data());
    return c_.ws.gated.data();
  }

  void AddNorm(const float* residual, const Linear& producer, const LayerNormWeights& norm,
               float* out, float* residual_out, const LayerNormWeights& output_norm) {
    profile::ScopedOp op(profile::Op::kAddNorm);
    float* sublayer = c_.ws.sublayer.data();
    const float* bias = producer.bias.empty() ? nullptr : producer.bias.data();
    if (!output_norm.identity()) {
      // Gemma: the sublayer's output normalized in place, then added.
      AddNormRows(c_, sublayer, nullptr, bias, output_norm, sublayer, nullptr);
      bias = nullptr;
    }
    AddNormRows(c_, residual, sublayer, bias, norm, out, residual_out);
  }

 private:
  absl::Status Matmul(Dense& dense, const float* x, float* y) {
    profile::ScopedOp op(profile::Op::kMatmul);
    return dense.Forward(x, c_.packed.tokens, y);
  }

  // Normalizes the residual alone.
  void AddNorm(const float* residual, std::nullptr_t, const LayerNormWeights& norm, float* out,
               float* residual_out) {
    profile::ScopedOp op(profile::Op::kAddNorm);
    AddNormRows(c_, residual, nullptr, nullptr, norm, out, residual_out);
  }

  // The fused [tokens, qkv_width] Q|K|V with Q set on the kept rows only
  // (the attention reads no other; AttendInWorkspace):
  // - K|V of every row, dense [tokens, 2 kv_width] at the start of
  //   workspace.qkv, then spread in place to their columns [q_width,
  //   qkv_width), last row first. oneDNN 2.6 runs a matmul with a strided
  //   output in its reference kernel, so the spread is ours. Row r goes
  //   to r * qkv_width + q_width, at or past its own source r * 2 kv_width,
  //   so the rows below r, not moved yet, are never written over (a row may
  //   overlap its own source: memmove).
  // - Q of the kept rows: their inputs gathered into workspace.sublayer,
  //   projected into workspace.context (both free until the attention
  //   fills the context), and copied to the kept rows' Q columns.
  absl::Status ProjectKeptQkv(KeptRowQkv& kept, const float* input, TokenRows rows) {
    profile::ScopedOp op(profile::Op::kMatmul);
    Workspace& ws = c_.ws;
    const PackedBatch& packed = c_.packed;
    const int64_t q_width = c_.config.query_width();
    const int64_t qkv_width = c_.config.qkv_width();
    const int64_t key_value_width = qkv_width - q_width;  // 2 kv_width: K and V
    const size_t hidden = static_cast<size_t>(c_.config.hidden_size);
    float* qkv = ws.qkv.data();
    RETURN_IF_ERROR(kept.key_value->Forward(input, packed.tokens, qkv));
    for (int64_t r = packed.tokens - 1; r >= 0; --r) {
      std::memmove(qkv + r * qkv_width + q_width, qkv + r * key_value_width,
                   static_cast<size_t>(key_value_width) * sizeof(float));
    }
    for (int i = 0; i < packed.num_sequences; ++i) {
      std::memcpy(ws.sublayer.data() + i * hidden, input + KeptRow(packed, rows, i) * hidden,
                  hidden * sizeof(float));
    }
    if (absl::Status s =
            kept.query->Forward(ws.sublayer.data(), packed.num_sequences, ws.context.data());
        !s.ok()) {
      return s;
    }
    for (int i = 0; i < packed.num_sequences; ++i) {
      std::memcpy(qkv + KeptRow(packed, rows, i) * qkv_width, ws.context.data() + i * q_width,
                  static_cast<size_t>(q_width) * sizeof(float));
    }
    return absl::OkStatus();
  }

  LayerContext c_;
};

class Bf16Policy {
 public:
  explicit Bf16Policy(const LayerContext& c) : c_(c), float_(c) {}

  void PrepareInput(const LayerNormWeights* first_norm) { float_.PrepareInput(first_norm); }

  absl::Status Attend(LayerWeights& layer, const float* input, TokenRows query_rows) {
    const int64_t hidden = c_.config.hidden_size;
    RETURN_IF_ERROR(Matmul(*layer.qkv.fp32, ToBf16(input, hidden), c_.ws.qkv.data()));
    AttendInWorkspace(c_, layer, query_rows);
    return absl::OkStatus();
  }

  absl::Status ProjectContext(LayerWeights& layer) {
    Workspace& ws = c_.ws;
    return Matmul(*layer.attention_out.fp32, ToBf16(ws.context.data(), c_.config.query_width()),
                  ws.sublayer.data());
  }

  absl::Status FeedForward(LayerWeights& layer, const float* input) {
    Workspace& ws = c_.ws;
    uint16_t* inner = ws.bf16_intermediate();
    if (!c_.config.gated_ffn) {
      // The first matmul writes bf16 with the activation fused.
      RETURN_IF_ERROR(Matmul(*layer.ffn_in.fp32, ToBf16(input, c_.config.hidden_size), inner));
      return Matmul(*layer.ffn_out.fp32, inner, ws.sublayer.data());
    }
    // Gated: float [tokens, 2I] out of the first matmul, gated in float,
    // then rounded to bf16 over the (consumed) inner activations.
    RETURN_IF_ERROR(
        Matmul(*layer.ffn_in.fp32, ToBf16(input, c_.config.hidden_size), ws.intermediate.data()));
    const float* gated = float_.Gate(ws.intermediate.data());
    {
      profile::ScopedOp op(profile::Op::kQuantize);
      kernels::ConvertToBf16(gated, c_.packed.tokens * c_.config.intermediate_size, inner);
    }
    return Matmul(*layer.ffn_out.fp32, inner, ws.sublayer.data());
  }

  void AddNorm(const float* residual, const Linear& producer, const LayerNormWeights& norm,
               float* out, float* residual_out, const LayerNormWeights& output_norm) {
    float_.AddNorm(residual, producer, norm, out, residual_out, output_norm);
  }

 private:
  // `rows` x `width` floats rounded into the workspace's bf16 input.
  const uint16_t* ToBf16(const float* x, int64_t width) {
    profile::ScopedOp op(profile::Op::kQuantize);
    uint16_t* out = c_.ws.bf16_input_bits();
    kernels::ConvertToBf16(x, c_.packed.tokens * width, out);
    return out;
  }

  absl::Status Matmul(Dense& dense, const void* x, void* y) {
    profile::ScopedOp op(profile::Op::kMatmul);
    return dense.Forward(x, c_.packed.tokens, y);
  }

  LayerContext c_;
  FloatPolicy float_;  // Add & Norm and the first input stay in float
};

class Int8Policy {
 public:
  explicit Int8Policy(const LayerContext& c) : c_(c) {}

  void PrepareInput(const LayerNormWeights* first_norm) {
    Workspace& ws = c_.ws;
    if (first_norm == nullptr || first_norm->identity()) {
      profile::ScopedOp op(profile::Op::kQuantize);
      kernels::QuantizeRows(ws.hidden.data(), c_.packed.tokens, c_.config.hidden_size,
                            QuantizedInput());
      return;
    }
    AddNorm(ws.hidden.data(), nullptr, *first_norm, ws.normed.data(), nullptr);
  }

  absl::Status Attend(LayerWeights& layer, const float* /*input: quantized in ws*/,
                      TokenRows query_rows) {
    RETURN_IF_ERROR(Matmul(layer.qkv));
    {
      // Attention itself runs in float.
      profile::ScopedOp op(profile::Op::kDequantize);
      kernels::Dequantize(Accumulator(layer.qkv), c_.packed.tokens, c_.config.qkv_width(),
                          c_.ws.qkv.data());
    }
    AttendInWorkspace(c_, layer, query_rows);
    return absl::OkStatus();
  }

  absl::Status ProjectContext(LayerWeights& layer) {
    {
      profile::ScopedOp op(profile::Op::kQuantize);
      kernels::QuantizeRows(c_.ws.context.data(), c_.packed.tokens, c_.config.query_width(),
                            QuantizedInput());
    }
    return Matmul(layer.attention_out);
  }

  absl::Status FeedForward(LayerWeights& layer, const float* /*input: quantized in ws*/) {
    RETURN_IF_ERROR(Matmul(layer.ffn_in));
    if (c_.config.gated_ffn) {
      // Where the family asks for it, the gated product (heavy-tailed: a
      // product of two projections) gets a second level for the output
      // projection (kernels.h "Two-level inputs"); its accumulator then
      // holds both levels' products, which Accumulator() combines.
      profile::ScopedOp op(profile::Op::kGate);
      const int64_t inter = c_.config.intermediate_size;
      kernels::DequantizeGateQuantize(
          Accumulator(layer.ffn_in), c_.packed.tokens, inter, ToEltwise(c_.config.activation),
          QuantizedInput(),
          layer.ffn_out.two_level_input ? ResidualInput(inter) : kernels::QuantizedRows{});
    } else {
      profile::ScopedOp op(profile::Op::kGelu);
      kernels::DequantizeActivateQuantize(Accumulator(layer.ffn_in), c_.packed.tokens,
                                          c_.config.intermediate_size,
                                          ToEltwise(c_.config.activation), QuantizedInput());
    }
    return Matmul(layer.ffn_out);
  }

  void AddNorm(const float* residual, const Linear& producer, const LayerNormWeights& norm,
               float* out, float* residual_out, const LayerNormWeights& output_norm) {
    if (output_norm.identity()) {
      AddNorm(residual, &producer, norm, out, residual_out);
      return;
    }
    // Gemma: the sublayer's output dequantized (with its bias) and
    // normalized in float, added in the float sweep, then quantized.
    profile::ScopedOp op(profile::Op::kAddNorm);
    float* sublayer = c_.ws.sublayer.data();
    kernels::Dequantize(Accumulator(producer), c_.packed.tokens, c_.config.hidden_size, sublayer);
    AddNormRows(c_, sublayer, nullptr, nullptr, output_norm, sublayer, nullptr);
    AddNormRows(c_, residual, sublayer, nullptr, norm, out, residual_out);
    kernels::QuantizeRows(out, c_.packed.tokens, c_.config.hidden_size, QuantizedInput());
  }

 private:
  // The workspace's row-quantized matmul input (and, after each epilogue,
  // the next matmul's).
  kernels::QuantizedRows QuantizedInput() const {
    return {c_.ws.quantized_u8(), c_.ws.row_scale.data(), c_.ws.row_zero_s32()};
  }

  // A two-level input's second level: the `cols`-wide rows after the
  // first level's in the workspace, with their scales and zero points.
  kernels::QuantizedRows ResidualInput(int64_t cols) const {
    const int64_t tokens = c_.packed.tokens;
    return {c_.ws.quantized_u8() + tokens * cols, c_.ws.row_scale.data() + tokens,
            c_.ws.row_zero_s32() + tokens};
  }

  // The workspace's accumulator as the output of `linear` on QuantizedInput
  // (and ResidualInput, stacked after it, for a two-level input).
  kernels::Int8Accumulator Accumulator(const Linear& linear) const {
    kernels::Int8Accumulator a;
    a.acc = c_.ws.accumulator_s32();
    a.row_scale = c_.ws.row_scale.data();
    a.row_zero = c_.ws.row_zero_s32();
    a.col_scale = linear.int8->col_scale();
    a.col_sum = linear.int8->col_sum();
    a.bias = linear.bias.data();
    if (linear.two_level_input) {
      const int64_t tokens = c_.packed.tokens;
      a.residual_acc = a.acc + tokens * linear.int8->out();
      a.residual_row_scale = a.row_scale + tokens;
      a.residual_row_zero = a.row_zero + tokens;
    }
    return a;
  }

  // workspace.accumulator = QuantizedInput * W^T, both levels of a
  // two-level input in one matmul of twice the rows.
  absl::Status Matmul(const Linear& linear) {
    profile::ScopedOp op(profile::Op::kMatmul);
    const int64_t rows = linear.two_level_input ? 2 * c_.packed.tokens : c_.packed.tokens;
    return linear.int8->Forward(c_.ws.quantized_u8(), rows, c_.ws.accumulator_s32());
  }

  // producer null: normalize the residual alone. The output is also
  // quantized for the next matmul.
  void AddNorm(const float* residual, const Linear* producer, const LayerNormWeights& norm,
               float* out, float* residual_out) {
    profile::ScopedOp op(profile::Op::kAddNorm);
    kernels::AddLayerNormInt8Args args;
    args.residual = residual;
    if (producer != nullptr) args.sublayer = Accumulator(*producer);
    args.gamma = norm.gamma.data();
    args.beta = norm.beta.data();
    args.eps = c_.config.layer_norm_eps;
    args.rms = c_.config.rms_norm;
    args.rows = c_.packed.tokens;
    args.hidden = c_.config.hidden_size;
    args.out = out;
    args.residual_out = residual_out;
    args.quantized = QuantizedInput();
    kernels::AddLayerNormInt8(args);
  }

  LayerContext c_;
};

}  // namespace engine
