#include "dnnl/dense.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/kernels.h"

namespace engine {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::primitive_attr MakeAttr(DenseActivation activation) {
  dnnl::post_ops ops;
  switch (activation) {
    case DenseActivation::kNone:
      break;
    case DenseActivation::kGeluErf:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
      break;
    case DenseActivation::kGeluTanh:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
      break;
    case DenseActivation::kRelu:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      break;
    case DenseActivation::kSilu:  // swish with beta 1
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
      break;
  }
  dnnl::primitive_attr attr = DnnlContext::UserScratchpadAttr();
  attr.set_post_ops(ops);
  return attr;
}

dt SourceType(DenseTypes types) { return types == DenseTypes::kF32 ? dt::f32 : dt::bf16; }
dt OutputType(DenseTypes types) { return types == DenseTypes::kBf16ToBf16 ? dt::bf16 : dt::f32; }

dnnl::matmul::primitive_desc MakePrimitiveDesc(const dnnl::engine& engine, int64_t rows, int64_t in,
                                               int64_t out, const memory::desc& weights,
                                               bool has_bias, DenseActivation activation,
                                               DenseTypes types) {
  const memory::desc bias = has_bias ? memory::desc({1, out}, dt::f32, tag::ab) : memory::desc();
  return MakeMatmulDesc(engine, rows, in, out, SourceType(types), OutputType(types), weights, bias,
                        MakeAttr(activation));
}

// The activation the engine's own kernel applies after a float32 matmul,
// or kNone when oneDNN's post-op does (or there is none). GELU is ours: the
// Debian oneDNN's gelu_erf epilogue costs about a fifth of a MiniLM-shaped
// FFN matmul, a sweep of kernels::Activate over its output about a
// sixteenth (bench/README.md). ReLU stays a post-op: it costs ~nothing
// there. bf16 outputs keep the post-op (it runs before the narrowing).
kernels::Eltwise OwnActivation(DenseActivation activation, DenseTypes types) {
  if (types != DenseTypes::kF32) return kernels::Eltwise::kNone;
  switch (activation) {
    case DenseActivation::kGeluErf:
      return kernels::Eltwise::kGeluErf;
    case DenseActivation::kGeluTanh:
      return kernels::Eltwise::kGeluTanh;
    default:
      return kernels::Eltwise::kNone;
  }
}

}  // namespace

DenseActivation ToDenseActivation(Activation activation) {
  switch (activation) {
    case Activation::kGeluErf:
      return DenseActivation::kGeluErf;
    case Activation::kGeluTanh:
      return DenseActivation::kGeluTanh;
    case Activation::kRelu:
      return DenseActivation::kRelu;
    case Activation::kSilu:
      return DenseActivation::kSilu;
  }
  return DenseActivation::kNone;
}

absl::StatusOr<const MatmulPrimitive*> MatmulCache::Get(int64_t rows, int64_t in, int64_t out,
                                                        const memory::desc& weights, bool has_bias,
                                                        DenseActivation activation,
                                                        DenseTypes types) {
  return FindOrCreateMatmul(
      *context_, primitives_, Key{rows, in, out, has_bias, activation, types},
      [&] {
        return MakePrimitiveDesc(context_->engine, rows, in, out, weights, has_bias, activation,
                                 types);
      },
      types == DenseTypes::kF32 ? "oneDNN matmul" : "oneDNN bf16 matmul", rows, in, out);
}

absl::StatusOr<std::unique_ptr<Dense>> Dense::Create(MatmulCache* cache, const float* weight,
                                                     const float* bias, int64_t in, int64_t out,
                                                     DenseActivation activation) {
  return CreateWithTypes(cache, weight, bias, in, out, activation, DenseTypes::kF32);
}

absl::StatusOr<std::unique_ptr<Dense>> Dense::CreateBf16(MatmulCache* cache, const uint16_t* weight,
                                                         const float* bias, int64_t in, int64_t out,
                                                         DenseActivation activation,
                                                         DenseTypes types) {
  if (types == DenseTypes::kF32) {
    return absl::InvalidArgumentError("Dense::CreateBf16 needs bf16 types");
  }
  return CreateWithTypes(cache, weight, bias, in, out, activation, types);
}

absl::StatusOr<std::unique_ptr<Dense>> Dense::CreateWithTypes(MatmulCache* cache,
                                                              const void* weight, const float* bias,
                                                              int64_t in, int64_t out,
                                                              DenseActivation activation,
                                                              DenseTypes types) {
  std::unique_ptr<Dense> dense(new Dense());
  dense->cache_ = cache;
  dense->types_ = types;
  dense->in_ = in;
  dense->out_ = out;
  dense->own_activation_ = OwnActivation(activation, types);
  dense->activation_ =
      dense->own_activation_ == kernels::Eltwise::kNone ? activation : DenseActivation::kNone;
  const dnnl::engine& engine = cache->context()->engine;
  const dt weight_type = SourceType(types);
  try {
    // W^T as a {in, out} matrix is W's memory read with strides {1, in}: tag ba.
    const memory::desc plain({in, out}, weight_type, tag::ba);
    const memory::desc any({in, out}, weight_type, tag::any);
    const dnnl::matmul::primitive_desc pd = MakePrimitiveDesc(
        engine, kWeightLayoutRows, in, out, any, bias != nullptr, activation, types);
    // A blocked layout (brgemm, AVX-512) is kept. When oneDNN picks a plain
    // one (gemm:jit, AVX2) it is ab, W^T row-major: with out = 3072 its rows
    // sit 12 KiB apart, a multiple of 4 KiB, and the 128 x 768 x 3072 FFN
    // matmul ran at half the speed of the other shapes (bench/engine/dnnl_peak
    // --weights ab|ba). gemm:jit reads torch's own [out, in] layout (ba) at
    // full speed for every BERT shape, so plain means ba.
    const memory::desc chosen = pd.weights_desc();
    const bool blocked =
        chosen.data.format_kind == dnnl_blocked && chosen.data.format_desc.blocking.inner_nblks > 0;
    dense->weights_ = ReorderWeights(*cache->context(), plain, const_cast<void*>(weight),
                                     blocked ? chosen : plain);
    if (bias != nullptr) {
      dense->bias_ = memory({{1, out}, dt::f32, tag::ab}, engine);
      std::memcpy(dense->bias_.get_data_handle(), bias, static_cast<size_t>(out) * sizeof(float));
    }
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN dense layer ", in, "->", out, ": ", e.what()));
  }
  return dense;
}

absl::Status Dense::Forward(const void* x, int64_t rows, void* y) {
  absl::Status status =
      bound_.Execute(*cache_->context(), rows, x, y, weights_, bias_, [this](int64_t bucket) {
        return cache_->Get(bucket, in_, out_, weights_.get_desc(), bias_ ? true : false,
                           activation_, types_);
      });
  if (status.ok() && own_activation_ != kernels::Eltwise::kNone) {
    kernels::Activate(static_cast<float*>(y), rows, out_, own_activation_);
  }
  return status;
}

}  // namespace engine
