// A dense (fully connected) layer, y = x * W^T (+ b) (+ activation), as a
// oneDNN matmul. The weight is reordered once, at creation, into the
// blocked layout oneDNN's fast kernels prefer. oneDNN's fast kernels need
// concrete shapes, so a primitive is created per bucket of row counts
// (BucketRows) and cached; the caller's buffers must hold BucketRows(rows)
// rows.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "dnnl/dnnl_context.h"
#include "engine/config.h"

namespace engine {

enum class DenseActivation { kNone, kGeluErf, kGeluTanh, kRelu };

DenseActivation ToDenseActivation(Activation activation);

// Rounds a row count up to its primitive bucket: multiples of 8 up to 64,
// then 8 buckets per power of two (at most 12.5% extra rows computed).
int64_t BucketRows(int64_t rows);

// Primitives shared by all dense layers of one encoder, keyed by shape.
// Not thread-safe: one encoder runs one batch at a time. Primitives use the
// context's shared scratchpad (DnnlContext::UserScratchpadAttr), reserved
// here when a primitive is created.
class MatmulCache {
 public:
  struct Entry {
    dnnl::matmul primitive;
    dnnl::memory::desc scratchpad;  // zero size: none needed
    std::string implementation;     // oneDNN's impl_info_str, e.g. "gemm:jit"
  };

  explicit MatmulCache(DnnlContext* context) : context_(context) {}
  DnnlContext* context() const { return context_; }

  // The primitive for `rows` (already bucketed) x `in` -> `out` with this
  // weight layout and epilogue; created on first use.
  absl::StatusOr<const Entry*> Get(int64_t rows, int64_t in, int64_t out,
                                   const dnnl::memory::desc& weights, bool has_bias,
                                   DenseActivation activation);
  size_t size() const { return primitives_.size(); }

 private:
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, DenseActivation>;
  DnnlContext* context_;
  std::map<Key, Entry> primitives_;
};

class Dense {
 public:
  // `weight` is [out, in] row-major (torch.nn.Linear's layout); `bias` has
  // `out` floats or is null. Both are copied.
  static absl::StatusOr<std::unique_ptr<Dense>> Create(MatmulCache* cache, const float* weight,
                                                       const float* bias, int64_t in, int64_t out,
                                                       DenseActivation activation);

  // y[rows, out] = x[rows, in] * W^T + b, activation applied. `x` and `y`
  // must have room for BucketRows(rows) rows; rows past `rows` are scratch.
  absl::Status Forward(const float* x, int64_t rows, float* y);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  size_t weight_bytes() const { return weights_.get_desc().get_size(); }

 private:
  // A primitive bound to memory objects for one row bucket, with its C API
  // argument array built once: Forward only swaps data pointers and calls
  // dnnl_primitive_execute (the C++ execute would build a std::vector of
  // arguments per call). What oneDNN itself still allocates per execution
  // is listed in tests/engine/allocation_test.cc.
  struct Bound {
    const MatmulCache::Entry* entry = nullptr;
    dnnl::memory src;
    dnnl::memory dst;
    dnnl::memory scratchpad;  // empty when the primitive needs none
    std::array<dnnl_exec_arg_t, 5> args{};
    int nargs = 0;
  };
  absl::StatusOr<Bound*> BindBucket(int64_t bucket);

  Dense() = default;
  MatmulCache* cache_ = nullptr;
  std::map<int64_t, Bound> bound_;
  int64_t in_ = 0;
  int64_t out_ = 0;
  DenseActivation activation_ = DenseActivation::kNone;
  dnnl::memory weights_;
  dnnl::memory bias_;
};

}  // namespace engine
