#include "dnnl/quantized_dense.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/buffer.h"

namespace engine {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::matmul::primitive_desc MakePrimitiveDesc(const dnnl::engine& engine, int64_t rows, int64_t in,
                                               int64_t out, const memory::desc& weights) {
  return MakeMatmulDesc(engine, rows, in, out, dt::u8, dt::s32, weights, memory::desc(),
                        DnnlContext::UserScratchpadAttr());
}

}  // namespace

int Int8WeightMax() {
  static const int max = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return 127;
      default:
        return 63;
    }
  }();
  return max;
}

void QuantizeWeights(const float* weight, int64_t in, int64_t out, int weight_max, int8_t* wq,
                     float* scale, int32_t* sum) {
  for (int64_t o = 0; o < out; ++o) {
    const float* w = weight + o * in;
    float max_abs = 0.0f;
    for (int64_t k = 0; k < in; ++k) max_abs = std::max(max_abs, std::fabs(w[k]));
    const float s = max_abs > 0.0f ? max_abs / static_cast<float>(weight_max) : 1.0f;
    const float inv = 1.0f / s;
    int32_t total = 0;
    for (int64_t k = 0; k < in; ++k) {
      // Round to nearest even by adding and removing 1.5 * 2^23 (exact for
      // |x| < 2^22; here |x| <= weight_max): unlike nearbyint, which is a
      // library call without SSE4.1, this vectorizes, and 85M weights load
      // in a fraction of the time.
      constexpr float kRound = 12582912.0f;
      const float q = std::clamp((w[k] * inv + kRound) - kRound, static_cast<float>(-weight_max),
                                 static_cast<float>(weight_max));
      wq[o * in + k] = static_cast<int8_t>(q);
      total += static_cast<int32_t>(q);
    }
    scale[o] = s;
    sum[o] = total;
  }
}

absl::StatusOr<const MatmulPrimitive*> Int8MatmulCache::Get(int64_t rows, int64_t in, int64_t out,
                                                            const memory::desc& weights) {
  return FindOrCreateMatmul(
      *context_, primitives_, std::make_tuple(rows, in, out),
      [&] { return MakePrimitiveDesc(context_->engine, rows, in, out, weights); },
      "oneDNN int8 matmul", rows, in, out);
}

absl::StatusOr<std::unique_ptr<QuantizedDense>> QuantizedDense::Create(Int8MatmulCache* cache,
                                                                       const float* weight,
                                                                       int64_t in, int64_t out,
                                                                       int weight_max) {
  std::unique_ptr<QuantizedDense> dense(new QuantizedDense());
  dense->cache_ = cache;
  dense->in_ = in;
  dense->out_ = out;
  dense->col_scale_.resize(static_cast<size_t>(out));
  dense->col_sum_.resize(static_cast<size_t>(out));
  // The plain s8 copy lives only until the reorder; mmap'd (Buffer) so its
  // pages are returned, not kept in the heap, when it is freed.
  absl::StatusOr<Buffer> plain = Buffer::Allocate(static_cast<size_t>((in * out + 3) / 4));
  if (!plain.ok()) return plain.status();
  int8_t* plain_weights = reinterpret_cast<int8_t*>(plain->data());
  QuantizeWeights(weight, in, out, weight_max, plain_weights, dense->col_scale_.data(),
                  dense->col_sum_.data());
  try {
    // W^T as {in, out} is W's memory read with strides {1, in}: tag ba.
    const memory::desc plain_desc({in, out}, dt::s8, tag::ba);
    const memory::desc any({in, out}, dt::s8, tag::any);
    const dnnl::matmul::primitive_desc pd =
        MakePrimitiveDesc(cache->context()->engine, kWeightLayoutRows, in, out, any);
    dense->weights_ =
        ReorderWeights(*cache->context(), plain_desc, plain_weights, pd.weights_desc());
  } catch (const dnnl::error& e) {
    return absl::InternalError(
        absl::StrCat("oneDNN int8 dense layer ", in, "->", out, ": ", e.what()));
  }
  return dense;
}

absl::Status QuantizedDense::Forward(const uint8_t* x, int64_t rows, int32_t* acc) {
  return bound_.Execute(
      *cache_->context(), rows, x, acc, weights_, dnnl::memory(),
      [this](int64_t bucket) { return cache_->Get(bucket, in_, out_, weights_.get_desc()); });
}

}  // namespace engine
