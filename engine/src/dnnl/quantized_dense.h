// A dense layer with int8 weights: acc = q * Wq^T as a oneDNN u8 x s8 -> s32
// matmul. The caller quantizes the input per row (kernels::QuantizeRows or a
// fused epilogue) and dequantizes acc with this layer's column scales and
// sums (kernels::Int8Accumulator); oneDNN 2.6 has neither per-row scales nor
// per-row zero points, so both are applied in our epilogues, and the
// matmul itself stays a plain integer product.
//
// Weights are quantized symmetrically per output channel (a row of
// torch.nn.Linear's [out, in] weight) to [-max, max] with max =
// Int8WeightMax(), then reordered once into oneDNN's preferred layout.
// Primitives are created per row bucket (BucketRows) and cached, as for Dense.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl/bound_matmul.h"
#include "dnnl/dnnl_context.h"

namespace engine {

// The largest weight magnitude that oneDNN's u8 x s8 matmul multiplies
// exactly on this CPU. Without VNNI oneDNN multiplies with vpmaddubsw, which
// adds two u8 * s8 products in a saturating int16: 255 * 127 * 2 overflows it,
// 255 * 63 * 2 = 32130 does not. So 7-bit weights (63) unless oneDNN runs
// an ISA with VNNI (vpdpbusd adds into int32), where all 8 bits (127) are
// exact. oneDNN's ISA is the one under the instruction-set level's cap
// (engine/isa.h), set before the first call, so the range follows the level;
// AVX-VNNI (avx2_vnni) keeps 63: oneDNN 2.6 may multiply without it there.
int Int8WeightMax();

// Primitives shared by the int8 layers of one encoder, keyed by shape, on
// the context's shared scratchpad (as MatmulCache's).
// Not thread-safe: one encoder runs one batch at a time.
class Int8MatmulCache {
 public:
  explicit Int8MatmulCache(DnnlContext* context) : context_(context) {}
  DnnlContext* context() const { return context_; }
  absl::StatusOr<const MatmulPrimitive*> Get(int64_t rows, int64_t in, int64_t out,
                                             const dnnl::memory::desc& weights);
  size_t size() const { return primitives_.size(); }

 private:
  DnnlContext* context_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, MatmulPrimitive> primitives_;
};

class QuantizedDense {
 public:
  // `weight` is [out, in] float32 row-major; only an s8 copy is kept.
  // `weight_max` bounds the quantized magnitudes (Int8WeightMax()).
  static absl::StatusOr<std::unique_ptr<QuantizedDense>> Create(Int8MatmulCache* cache,
                                                                const float* weight, int64_t in,
                                                                int64_t out, int weight_max);

  // acc[rows, out] = x[rows, in] * Wq^T in int32. `x` and `acc` must have
  // room for BucketRows(rows) rows; rows past `rows` are scratch.
  absl::Status Forward(const uint8_t* x, int64_t rows, int32_t* acc);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  // Per output channel: w ~ wq * col_scale; col_sum = sum of the row of wq.
  const float* col_scale() const { return col_scale_.data(); }
  const int32_t* col_sum() const { return col_sum_.data(); }
  size_t weight_bytes() const { return weights_.get_desc().get_size(); }

 private:
  QuantizedDense() = default;
  Int8MatmulCache* cache_ = nullptr;
  BucketedMatmul bound_;  // executes without allocating (bound_matmul.h)
  int64_t in_ = 0;
  int64_t out_ = 0;
  dnnl::memory weights_;
  std::vector<float> col_scale_;
  std::vector<int32_t> col_sum_;
};

// Quantizes `weight` [out, in] per row to s8 in [-weight_max, weight_max]:
// scale = max|w| / weight_max (1 for an all-zero row), wq = round(w / scale).
// Exposed for tests.
void QuantizeWeights(const float* weight, int64_t in, int64_t out, int weight_max, int8_t* wq,
                     float* scale, int32_t* sum);

}  // namespace engine
