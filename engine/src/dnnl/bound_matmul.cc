#include "dnnl/bound_matmul.h"

namespace engine {

using dnnl::memory;
using tag = memory::format_tag;

int64_t BucketRows(int64_t rows) {
  if (rows <= 64) return (rows + 7) / 8 * 8;
  int64_t octave = 64;
  while (octave * 2 <= rows) octave *= 2;
  const int64_t step = octave / 8;
  return (rows + step - 1) / step * step;
}

dnnl::matmul::primitive_desc MakeMatmulDesc(const dnnl::engine& engine, int64_t rows, int64_t in,
                                            int64_t out, memory::data_type src_type,
                                            memory::data_type dst_type, const memory::desc& weights,
                                            const memory::desc& bias,
                                            const dnnl::primitive_attr& attr) {
  const memory::desc src({rows, in}, src_type, tag::ab);
  const memory::desc dst({rows, out}, dst_type, tag::ab);
  const dnnl::matmul::desc desc = bias.get_size() > 0 ? dnnl::matmul::desc(src, weights, bias, dst)
                                                      : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, engine);
}

memory ReorderWeights(DnnlContext& context, const memory::desc& plain, void* data,
                      const memory::desc& layout) {
  memory source(plain, context.engine, data);
  memory weights(layout, context.engine);
  dnnl::reorder(source, weights).execute(context.stream, source, weights);
  context.stream.wait();
  return weights;
}

MatmulPrimitive MakeMatmulPrimitive(DnnlContext& context, const dnnl::matmul::primitive_desc& pd) {
  MatmulPrimitive made{dnnl::matmul(pd), pd.src_desc(), pd.dst_desc(), pd.scratchpad_desc(),
                       pd.impl_info_str()};
  context.ReserveScratchpad(made.scratchpad.get_size());
  return made;
}

absl::StatusOr<BoundMatmul> BoundMatmul::Bind(const dnnl::engine& engine,
                                              const MatmulPrimitive& primitive,
                                              const memory& weights, const memory& bias) {
  BoundMatmul bound;
  bound.primitive_ = &primitive;
  try {
    bound.src_ = memory(primitive.src, engine, DNNL_MEMORY_NONE);
    bound.dst_ = memory(primitive.dst, engine, DNNL_MEMORY_NONE);
    if (primitive.scratchpad.get_size() > 0) {
      bound.scratchpad_ = memory(primitive.scratchpad, engine, DNNL_MEMORY_NONE);
    }
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN memory: ", e.what()));
  }
  auto add = [&bound](int arg, const memory& m) { bound.args_[bound.nargs_++] = {arg, m.get()}; };
  add(DNNL_ARG_SRC, bound.src_);
  add(DNNL_ARG_WEIGHTS, weights);
  add(DNNL_ARG_DST, bound.dst_);
  if (bias) add(DNNL_ARG_BIAS, bias);
  if (bound.scratchpad_) add(DNNL_ARG_SCRATCHPAD, bound.scratchpad_);
  return bound;
}

absl::Status BoundMatmul::Execute(DnnlContext& context, const void* src, void* dst) {
  // The C API throughout: the C++ wrappers' execute() builds a std::vector
  // of arguments per call (and they throw, which we would only convert).
  dnnl_status_t status =
      dnnl_memory_set_data_handle_v2(src_.get(), const_cast<void*>(src), context.stream.get());
  if (status == dnnl_success) {
    status = dnnl_memory_set_data_handle_v2(dst_.get(), dst, context.stream.get());
  }
  if (status == dnnl_success && scratchpad_) {
    // The shared buffer may have grown (moved) since this bucket was bound.
    status = dnnl_memory_set_data_handle_v2(scratchpad_.get(), context.scratchpad(),
                                            context.stream.get());
  }
  if (status == dnnl_success) {
    status = dnnl_primitive_execute(primitive_->primitive.get(), context.stream.get(), nargs_,
                                    args_.data());
  }
  if (status == dnnl_success) status = dnnl_stream_wait(context.stream.get());
  if (status != dnnl_success) {
    return absl::InternalError(
        absl::StrCat("oneDNN matmul execution: status ", static_cast<int>(status)));
  }
  return absl::OkStatus();
}

}  // namespace engine
