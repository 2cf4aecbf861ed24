// Element-wise kernels of the encoder. Kernels take raw pointers and sizes:
// no allocation, no Status, no logging. Each public entry point dispatches
// at run time to the best ISA the CPU has (AVX-512, AVX2, scalar); the
// scalar versions are the reference the tests compare against.
#pragma once

#include <cstdint>

namespace engine::kernels {

enum class Isa { kScalar, kAvx2, kAvx512 };

// The best ISA this CPU supports (and the build compiled), at most the cap.
Isa BestIsa();
// Caps BestIsa() (and so every dispatching entry point) at `cap`, process-wide;
// engine::UseIsaLevel sets it. Without a call there is no cap. The *WithIsa
// entry points are not capped: tests and benchmarks name their ISA.
void CapIsa(Isa cap);
Isa IsaCap();
const char* IsaName(Isa isa);
// Whether `isa` can run on this CPU.
bool IsaSupported(Isa isa);

// Fused residual add + LayerNorm over `rows` rows of `hidden` floats, one
// sweep per row:
//   sum      = residual[r] + sublayer[r] + bias        (sublayer, bias may be null)
//   out[r]   = gamma * (sum - mean(sum)) / sqrt(var(sum) + eps) + beta
//   residual_out[r] = sum                              (only if residual_out != null; pre-LN)
// var is the biased variance. gamma and beta are required ([hidden] each).
// `out` may alias `residual` (post-LN in place);
// residual_out may alias residual. Rows are independent; the caller
// parallelizes over rows (AddLayerNorm does, with OpenMP).
struct AddLayerNormArgs {
  const float* residual = nullptr;
  const float* sublayer = nullptr;
  const float* bias = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 1e-12f;
  // RMSNorm (decoder families): the mean is taken as 0, beta is zeros.
  bool rms = false;
  int64_t rows = 0;
  int64_t hidden = 0;
  float* out = nullptr;
  float* residual_out = nullptr;
};

// Runs on all OpenMP threads with the best ISA.
void AddLayerNorm(const AddLayerNormArgs& args);
// One ISA, single-threaded over the given rows; for tests and benchmarks.
void AddLayerNormWithIsa(Isa isa, const AddLayerNormArgs& args);

// In-place row softmax of `rows` rows of `cols` floats with a scale applied
// to the inputs first: x[r][c] = exp(scale*x[r][c] - max) / sum. Rows of a
// sequence's attention scores; no mask is needed because batches are packed.
void ScaledSoftmax(float* x, int64_t rows, int64_t cols, float scale);
void ScaledSoftmaxWithIsa(Isa isa, float* x, int64_t rows, int64_t cols, float scale);

// In-place y = tanh(x) over n floats (BERT's pooler head).
void Tanh(float* x, int64_t n);

// ---- int8 inference: activation quantization and matmul epilogues ----
//
// Activations are quantized per row, asymmetric u8:
//   q = clamp(round(x / scale) + zero, 0, 255), x ~ (q - zero) * scale,
// over the row's range widened to include 0 (so 0 is exact). A row of zeros
// gets scale 1, zero 0. Weights are s8, symmetric per output column c, so the
// int32 accumulator of a u8 x s8 matmul, acc[r][c] = sum_k q[r][k] * w[c][k],
// dequantizes as
//   y[r][c] = (acc[r][c] - zero[r] * col_sum[c]) * scale[r] * col_scale[c] + bias[c]
// with col_sum[c] = sum_k w[c][k] (the zero point's share, removed exactly in
// int32).
//
// Two-level inputs (DequantizeGateQuantize with a `residual`): a row x is
// quantized as above (q, scale, zero), then its residual x - (q - zero) *
// scale (within half a step) is quantized again the same way (q', scale'
// ~ scale / 255, zero'), so (q - zero) * scale + (q' - zero') * scale'
// reproduces x to about 16 bits. Both parts multiply the same s8 weights
// (one matmul over the parts stacked as twice the rows), and the epilogue
// adds the two dequantized products:
//   y[r][c] = ((acc[r][c] - zero[r] * col_sum[c]) * scale[r]
//              + (acc'[r][c] - zero'[r] * col_sum[c]) * scale'[r]) * col_scale[c] + bias[c]

// Where a row-quantized u8 matrix goes: q [rows, cols], scale and zero [rows].
struct QuantizedRows {
  uint8_t* q = nullptr;
  float* scale = nullptr;
  int32_t* zero = nullptr;
};

// An int32 matmul result and what dequantizes it (see above).
struct Int8Accumulator {
  const int32_t* acc = nullptr;       // [rows, cols]
  const float* row_scale = nullptr;   // [rows], the matmul input's scales
  const int32_t* row_zero = nullptr;  // [rows], the matmul input's zero points
  const float* col_scale = nullptr;   // [cols], the weights' scales
  const int32_t* col_sum = nullptr;   // [cols], the weights' column sums
  const float* bias = nullptr;        // [cols], required
  // A two-level input's second part: its product and its rows' scales and
  // zero points (see above). Null for a one-level input.
  const int32_t* residual_acc = nullptr;
  const float* residual_row_scale = nullptr;
  const int32_t* residual_row_zero = nullptr;
};

// kSilu: x * sigmoid(x).
enum class Eltwise { kNone, kGeluErf, kGeluTanh, kRelu, kSilu };

// Quantizes x [rows, cols] into `out`.
void QuantizeRows(const float* x, int64_t rows, int64_t cols, const QuantizedRows& out);
void QuantizeRowsWithIsa(Isa isa, const float* x, int64_t rows, int64_t cols,
                         const QuantizedRows& out);

// out [rows, cols] = the dequantized accumulator plus bias, as float (both
// parts of a two-level accumulator).
void Dequantize(const Int8Accumulator& in, int64_t rows, int64_t cols, float* out);
void DequantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows, int64_t cols, float* out);

// The FFN's inner epilogue in one sweep per row: act(dequantized + bias),
// quantized into `out`. The accumulator is overwritten (each row's float
// activations are staged in place of its int32 values, 4 bytes each), so
// `in.acc` must be writable. out.scale/zero may alias in.row_scale/row_zero:
// a row's input scale is read before its output scale is written.
void DequantizeActivateQuantize(const Int8Accumulator& in, int64_t rows, int64_t cols, Eltwise act,
                                const QuantizedRows& out);
void DequantizeActivateQuantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows,
                                       int64_t cols, Eltwise act, const QuantizedRows& out);

// Add & Norm with the sublayer as an int8 accumulator: like AddLayerNormArgs
// with sublayer + bias = the dequantized accumulator (both parts of a
// two-level one; skipped when sublayer.acc is null), and, when quantized.q is set, the normalized
// row `out` also quantized there in the same sweep for the next matmul. quantized.scale/zero may
// alias sublayer.row_scale/row_zero.
struct AddLayerNormInt8Args {
  const float* residual = nullptr;
  Int8Accumulator sublayer;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 1e-12f;
  bool rms = false;  // as AddLayerNormArgs::rms
  int64_t rows = 0;
  int64_t hidden = 0;
  float* out = nullptr;
  float* residual_out = nullptr;
  QuantizedRows quantized;
};

void AddLayerNormInt8(const AddLayerNormInt8Args& args);
void AddLayerNormInt8WithIsa(Isa isa, const AddLayerNormInt8Args& args);

// ---- per-head Q/K norms (Qwen3, Gemma 3) ----
//
// In place over rows of a fused Q | K | V projection (row stride `stride`):
// each of the first q_heads head_size-wide heads of a row becomes
// x * rsqrt(mean(x^2) + eps) * q_gamma, each of the next k_heads the same
// with k_gamma; V is untouched.
struct RmsNormHeadsArgs {
  float* x = nullptr;
  int64_t rows = 0;
  int64_t stride = 0;
  int64_t head_size = 0;
  int64_t q_heads = 0;
  int64_t k_heads = 0;
  const float* q_gamma = nullptr;
  const float* k_gamma = nullptr;
  float eps = 1e-6f;
};
void RmsNormHeads(const RmsNormHeadsArgs& args);

// ---- activations ----
//
// x[r][c] = act(x[r][c]) in place for the [rows, cols] matrix x. The fp32
// FFN applies its GELU here rather than as a oneDNN post-op: the Debian
// oneDNN's gelu_erf epilogue costs about 20% of a MiniLM-shaped FFN matmul,
// this sweep over the matmul's output about 6% (bench/README.md).
void Activate(float* x, int64_t rows, int64_t cols, Eltwise act);
void ActivateWithIsa(Isa isa, float* x, int64_t rows, int64_t cols, Eltwise act);

// ---- gated feed-forward (GLU) ----
//
// The gate of a gated FFN: out[r][c] = act(x[r][c]) * x[r][cols + c] for
// c < cols, x [rows, 2 cols] (the activated half first), out [rows, cols].
void GatedActivation(const float* x, int64_t rows, int64_t cols, Eltwise act, float* out);
void GatedActivationWithIsa(Isa isa, const float* x, int64_t rows, int64_t cols, Eltwise act,
                            float* out);

// The int8 form in one sweep per row: the [rows, 2 cols] accumulator
// dequantized (+ bias), gated as above and quantized into `out` [rows,
// cols]. Staged in place of the accumulator like DequantizeActivateQuantize
// (in.acc must be writable; out.scale/zero may alias in.row_scale/row_zero).
// When residual.q is set, the gated row is quantized in two levels: `out`
// the first, `residual` [rows, cols] the second (see Two-level inputs
// above; it must not overlap `out` or in.row_scale/row_zero).
void DequantizeGateQuantize(const Int8Accumulator& in, int64_t rows, int64_t cols, Eltwise act,
                            const QuantizedRows& out, const QuantizedRows& residual = {});
void DequantizeGateQuantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows, int64_t cols,
                                   Eltwise act, const QuantizedRows& out,
                                   const QuantizedRows& residual = {});

}  // namespace engine::kernels
