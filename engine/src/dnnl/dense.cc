#include "dnnl/dense.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace engine {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// The row count a layer's weights are laid out for at creation; the blocked
// layout oneDNN picks depends on the weight's shape and the ISA, not on it.
constexpr int64_t kReferenceRows = 128;

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
  }
  dnnl::primitive_attr attr = DnnlContext::UserScratchpadAttr();
  attr.set_post_ops(ops);
  return attr;
}

dnnl::matmul::primitive_desc MakePrimitiveDesc(const dnnl::engine& engine, int64_t rows, int64_t in,
                                               int64_t out, const memory::desc& weights,
                                               bool has_bias, DenseActivation activation) {
  const memory::desc src({rows, in}, dt::f32, tag::ab);
  const memory::desc dst({rows, out}, dt::f32, tag::ab);
  const memory::desc bias = has_bias ? memory::desc({1, out}, dt::f32, tag::ab) : memory::desc();
  const dnnl::matmul::desc desc = has_bias ? dnnl::matmul::desc(src, weights, bias, dst)
                                           : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, MakeAttr(activation), engine);
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
  }
  return DenseActivation::kNone;
}

int64_t BucketRows(int64_t rows) {
  if (rows <= 64) return (rows + 7) / 8 * 8;
  int64_t octave = 64;
  while (octave * 2 <= rows) octave *= 2;
  const int64_t step = octave / 8;
  return (rows + step - 1) / step * step;
}

absl::StatusOr<const MatmulCache::Entry*> MatmulCache::Get(int64_t rows, int64_t in, int64_t out,
                                                           const memory::desc& weights,
                                                           bool has_bias,
                                                           DenseActivation activation) {
  const Key key{rows, in, out, has_bias, activation};
  auto it = primitives_.find(key);
  if (it != primitives_.end()) return &it->second;
  try {
    const dnnl::matmul::primitive_desc pd =
        MakePrimitiveDesc(context_->engine, rows, in, out, weights, has_bias, activation);
    Entry entry{dnnl::matmul(pd), pd.scratchpad_desc(), pd.impl_info_str()};
    context_->ReserveScratchpad(entry.scratchpad.get_size());
    return &primitives_.emplace(key, std::move(entry)).first->second;
  } catch (const dnnl::error& e) {
    return absl::InternalError(
        absl::StrCat("oneDNN matmul ", rows, "x", in, "x", out, ": ", e.what()));
  }
}

absl::StatusOr<std::unique_ptr<Dense>> Dense::Create(MatmulCache* cache, const float* weight,
                                                     const float* bias, int64_t in, int64_t out,
                                                     DenseActivation activation) {
  std::unique_ptr<Dense> dense(new Dense());
  dense->cache_ = cache;
  dense->in_ = in;
  dense->out_ = out;
  dense->activation_ = activation;
  const dnnl::engine& engine = cache->context()->engine;
  try {
    // W^T as a {in, out} matrix is W's memory read with strides {1, in}: tag ba.
    const memory::desc plain({in, out}, dt::f32, tag::ba);
    const memory::desc any({in, out}, dt::f32, tag::any);
    const dnnl::matmul::primitive_desc pd =
        MakePrimitiveDesc(engine, kReferenceRows, in, out, any, bias != nullptr, activation);
    memory source(plain, engine, const_cast<float*>(weight));
    // A blocked layout (brgemm, AVX-512) is kept. When oneDNN picks a plain
    // one (gemm:jit, AVX2) it is ab, W^T row-major: with out = 3072 its rows
    // sit 12 KiB apart, a multiple of 4 KiB, and the 128 x 768 x 3072 FFN
    // matmul ran at half the speed of the other shapes (bench/engine/dnnl_peak
    // --weights ab|ba). gemm:jit reads torch's own [out, in] layout (ba) at
    // full speed for every BERT shape, so plain means ba.
    const memory::desc chosen = pd.weights_desc();
    const bool blocked =
        chosen.data.format_kind == dnnl_blocked && chosen.data.format_desc.blocking.inner_nblks > 0;
    dense->weights_ = memory(blocked ? chosen : plain, engine);
    dnnl::reorder(source, dense->weights_)
        .execute(cache->context()->stream, source, dense->weights_);
    if (bias != nullptr) {
      dense->bias_ = memory({{1, out}, dt::f32, tag::ab}, engine);
      std::memcpy(dense->bias_.get_data_handle(), bias, static_cast<size_t>(out) * sizeof(float));
    }
    cache->context()->stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN dense layer ", in, "->", out, ": ", e.what()));
  }
  return dense;
}

absl::StatusOr<Dense::Bound*> Dense::BindBucket(int64_t bucket) {
  auto it = bound_.find(bucket);
  if (it != bound_.end()) return &it->second;
  absl::StatusOr<const MatmulCache::Entry*> entry =
      cache_->Get(bucket, in_, out_, weights_.get_desc(), bias_ ? true : false, activation_);
  if (!entry.ok()) return entry.status();
  const dnnl::engine& engine = cache_->context()->engine;
  Bound bound;
  bound.entry = *entry;
  try {
    bound.src = memory({{bucket, in_}, dt::f32, tag::ab}, engine, DNNL_MEMORY_NONE);
    bound.dst = memory({{bucket, out_}, dt::f32, tag::ab}, engine, DNNL_MEMORY_NONE);
    if (bound.entry->scratchpad.get_size() > 0) {
      bound.scratchpad = memory(bound.entry->scratchpad, engine, DNNL_MEMORY_NONE);
    }
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN memory: ", e.what()));
  }
  auto add = [&bound](int arg, const memory& m) { bound.args[bound.nargs++] = {arg, m.get()}; };
  add(DNNL_ARG_SRC, bound.src);
  add(DNNL_ARG_WEIGHTS, weights_);
  add(DNNL_ARG_DST, bound.dst);
  if (bias_) add(DNNL_ARG_BIAS, bias_);
  if (bound.scratchpad) add(DNNL_ARG_SCRATCHPAD, bound.scratchpad);
  return &bound_.emplace(bucket, std::move(bound)).first->second;
}

absl::Status Dense::Forward(const float* x, int64_t rows, float* y) {
  absl::StatusOr<Bound*> bound = BindBucket(BucketRows(rows));
  if (!bound.ok()) return bound.status();
  Bound& b = **bound;
  DnnlContext& context = *cache_->context();
  // The C API throughout: the C++ wrappers' execute() builds a std::vector
  // of arguments per call (and they throw, which we would only convert).
  dnnl_status_t status =
      dnnl_memory_set_data_handle_v2(b.src.get(), const_cast<float*>(x), context.stream.get());
  if (status == dnnl_success) {
    status = dnnl_memory_set_data_handle_v2(b.dst.get(), y, context.stream.get());
  }
  if (status == dnnl_success && b.scratchpad) {
    // The shared buffer may have grown (moved) since this bucket was bound.
    status = dnnl_memory_set_data_handle_v2(b.scratchpad.get(), context.scratchpad(),
                                            context.stream.get());
  }
  if (status == dnnl_success) {
    status = dnnl_primitive_execute(b.entry->primitive.get(), context.stream.get(), b.nargs,
                                    b.args.data());
  }
  if (status == dnnl_success) status = dnnl_stream_wait(context.stream.get());
  if (status != dnnl_success) {
    return absl::InternalError(
        absl::StrCat("oneDNN matmul execution: status ", static_cast<int>(status)));
  }
  return absl::OkStatus();
}

}  // namespace engine
