// A dense (fully connected) layer, y = x * W^T (+ b) (+ activation), as a
// oneDNN matmul. The weight is reordered once, at creation, into the
// blocked layout oneDNN's fast kernels prefer. oneDNN's fast kernels need
// concrete shapes, so a primitive is created per bucket of row counts
// (BucketRows) and cached; the caller's buffers must hold BucketRows(rows)
// rows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "absl/status/statusor.h"
#include "dnnl/bound_matmul.h"
#include "dnnl/dnnl_context.h"
#include "engine/config.h"
#include "kernels/kernels.h"

namespace engine {

enum class DenseActivation { kNone, kGeluErf, kGeluTanh, kRelu, kSilu };

// The element types a dense layer runs in: float32 throughout, or bf16
// weights and input (products accumulated in float32) with a float32 or a
// bf16 output.
enum class DenseTypes { kF32, kBf16ToF32, kBf16ToBf16 };

DenseActivation ToDenseActivation(Activation activation);

// Primitives shared by all dense layers of one encoder, keyed by shape.
// Not thread-safe: one encoder runs one batch at a time. Primitives use the
// context's shared scratchpad (DnnlContext::UserScratchpadAttr), reserved
// here when a primitive is created.
class MatmulCache {
 public:
  explicit MatmulCache(DnnlContext* context) : context_(context) {}
  DnnlContext* context() const { return context_; }

  // The primitive for `rows` (already bucketed) x `in` -> `out` with this
  // weight layout and epilogue; created on first use.
  absl::StatusOr<const MatmulPrimitive*> Get(int64_t rows, int64_t in, int64_t out,
                                             const dnnl::memory::desc& weights, bool has_bias,
                                             DenseActivation activation,
                                             DenseTypes types = DenseTypes::kF32);
  size_t size() const { return primitives_.size(); }

 private:
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, DenseActivation, DenseTypes>;
  DnnlContext* context_;
  std::map<Key, MatmulPrimitive> primitives_;
};

class Dense {
 public:
  // `weight` is [out, in] row-major (torch.nn.Linear's layout); `bias` has
  // `out` floats or is null. Both are copied.
  static absl::StatusOr<std::unique_ptr<Dense>> Create(MatmulCache* cache, const float* weight,
                                                       const float* bias, int64_t in, int64_t out,
                                                       DenseActivation activation);
  // The same with a bf16 weight (raw bits, [out, in]) and a bf16 input;
  // `types` is kBf16ToF32 or kBf16ToBf16 (the output's type).
  static absl::StatusOr<std::unique_ptr<Dense>> CreateBf16(MatmulCache* cache,
                                                           const uint16_t* weight,
                                                           const float* bias, int64_t in,
                                                           int64_t out, DenseActivation activation,
                                                           DenseTypes types);

  // y[rows, out] = x[rows, in] * W^T + b, activation applied, in the
  // layer's types (float, or bf16 bits as uint16_t). `x` and `y` must have
  // room for BucketRows(rows) rows; rows past `rows` are scratch.
  absl::Status Forward(const void* x, int64_t rows, void* y);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  DenseTypes types() const { return types_; }
  size_t weight_bytes() const { return weights_.get_desc().get_size(); }

 private:
  Dense() = default;
  static absl::StatusOr<std::unique_ptr<Dense>> CreateWithTypes(
      MatmulCache* cache, const void* weight, const float* bias, int64_t in, int64_t out,
      DenseActivation activation, DenseTypes types);
  MatmulCache* cache_ = nullptr;
  DenseTypes types_ = DenseTypes::kF32;
  BucketedMatmul bound_;  // executes without allocating (bound_matmul.h)
  int64_t in_ = 0;
  int64_t out_ = 0;
  DenseActivation activation_ = DenseActivation::kNone;        // oneDNN's post-op
  kernels::Eltwise own_activation_ = kernels::Eltwise::kNone;  // applied after the matmul
  dnnl::memory weights_;
  dnnl::memory bias_;
};

}  // namespace engine
