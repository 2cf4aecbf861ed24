// Element-wise kernels of the encoder. Kernels take raw pointers and sizes:
// no allocation, no Status, no logging. Each public entry point dispatches
// at run time to the best ISA the CPU has (AVX-512, AVX2, scalar); the
// scalar versions are the reference the tests compare against.
#pragma once

#include <cstdint>

namespace engine::kernels {

enum class Isa { kScalar, kAvx2, kAvx512 };

// The best ISA this CPU supports (and the build compiled).
Isa BestIsa();
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

}  // namespace engine::kernels
