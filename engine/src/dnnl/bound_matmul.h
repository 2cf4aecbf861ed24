// What the float (Dense) and int8 (QuantizedDense) layers share: a oneDNN
// matmul primitive per shape and row bucket, on the context's user-mode
// scratchpad, bound per bucket to memory objects and a prebuilt C argument
// array, so that executing it allocates nothing in our code.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dnnl/dnnl_context.h"

namespace engine {

// Rounds a row count up to its primitive bucket: multiples of 8 up to 64,
// then 8 buckets per power of two (at most 12.5% extra rows computed).
int64_t BucketRows(int64_t rows);

// The row count a layer's weights are laid out for at creation; the blocked
// layout oneDNN picks depends on the weight's shape and the ISA, not on it.
constexpr int64_t kWeightLayoutRows = 128;

// The descriptor of dst[rows, out] = src[rows, in] * weights (+ bias), plain
// row-major activations; `bias` with zero size: none. `attr` should start
// from DnnlContext::UserScratchpadAttr(). Throws dnnl::error.
dnnl::matmul::primitive_desc MakeMatmulDesc(const dnnl::engine& engine, int64_t rows, int64_t in,
                                            int64_t out, dnnl::memory::data_type src_type,
                                            dnnl::memory::data_type dst_type,
                                            const dnnl::memory::desc& weights,
                                            const dnnl::memory::desc& bias,
                                            const dnnl::primitive_attr& attr);

// A weight in user memory (`plain` at `data`) reordered into a new memory
// of `layout`; waits for the reorder. Throws dnnl::error.
dnnl::memory ReorderWeights(DnnlContext& context, const dnnl::memory::desc& plain, void* data,
                            const dnnl::memory::desc& layout);

// A created primitive with the descriptors binding it needs.
struct MatmulPrimitive {
  dnnl::matmul primitive;
  dnnl::memory::desc src;
  dnnl::memory::desc dst;
  dnnl::memory::desc scratchpad;  // zero size: none needed
  std::string implementation;     // oneDNN's impl_info_str, e.g. "gemm:jit"
};

// Creates the primitive of `pd` and grows the context's scratchpad to it.
// Throws dnnl::error.
MatmulPrimitive MakeMatmulPrimitive(DnnlContext& context, const dnnl::matmul::primitive_desc& pd);

// The primitive for `key` in `primitives`, created from make_desc() on
// first use; errors name it "`what` rowsxinxout".
template <typename Key, typename MakeDesc>
absl::StatusOr<const MatmulPrimitive*> FindOrCreateMatmul(
    DnnlContext& context, std::map<Key, MatmulPrimitive>& primitives, const Key& key,
    MakeDesc make_desc, absl::string_view what, int64_t rows, int64_t in, int64_t out) {
  auto it = primitives.find(key);
  if (it != primitives.end()) return &it->second;
  try {
    MatmulPrimitive created = MakeMatmulPrimitive(context, make_desc());
    return &primitives.emplace(key, std::move(created)).first->second;
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat(what, " ", rows, "x", in, "x", out, ": ", e.what()));
  }
}

// A primitive bound to memory objects for one row bucket, with its C API
// argument array built once: Execute only swaps data pointers and calls
// dnnl_primitive_execute (the C++ execute would build a std::vector of
// arguments per call). What oneDNN itself still allocates per execution
// is listed in tests/engine/allocation_test.cc.
class BoundMatmul {
 public:
  // `weights` and `bias` (empty: none) must outlive the binding.
  static absl::StatusOr<BoundMatmul> Bind(const dnnl::engine& engine,
                                          const MatmulPrimitive& primitive,
                                          const dnnl::memory& weights, const dnnl::memory& bias);

  // dst = src * weights (+ bias) on the context's stream and scratchpad;
  // waits for it.
  absl::Status Execute(DnnlContext& context, const void* src, void* dst);

 private:
  const MatmulPrimitive* primitive_ = nullptr;
  dnnl::memory src_;
  dnnl::memory dst_;
  dnnl::memory scratchpad_;  // empty when the primitive needs none
  std::array<dnnl_exec_arg_t, 5> args_{};
  int nargs_ = 0;
};

// One layer's BoundMatmul per row bucket.
class BucketedMatmul {
 public:
  // Runs `rows` rows (src and dst hold BucketRows(rows)); the bucket's
  // primitive comes from get_primitive(bucket) and is bound on first use.
  template <typename GetPrimitive>
  absl::Status Execute(DnnlContext& context, int64_t rows, const void* src, void* dst,
                       const dnnl::memory& weights, const dnnl::memory& bias,
                       GetPrimitive get_primitive) {
    const int64_t bucket = BucketRows(rows);
    auto it = bound_.find(bucket);
    if (it == bound_.end()) {
      absl::StatusOr<const MatmulPrimitive*> primitive = get_primitive(bucket);
      if (!primitive.ok()) return primitive.status();
      absl::StatusOr<BoundMatmul> bound =
          BoundMatmul::Bind(context.engine, **primitive, weights, bias);
      if (!bound.ok()) return bound.status();
      it = bound_.emplace(bucket, *std::move(bound)).first;
    }
    return it->second.Execute(context, src, dst);
  }

 private:
  std::map<int64_t, BoundMatmul> bound_;
};

}  // namespace engine
