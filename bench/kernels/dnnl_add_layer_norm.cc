#include "dnnl_add_layer_norm.h"

#include <algorithm>
#include <unordered_map>

namespace engine::bench {

using dnnl::memory;

DnnlAddLayerNorm::DnnlAddLayerNorm(int64_t rows, int64_t hidden, float eps, const float* gamma,
                                   const float* beta, const float* residual, const float* sublayer,
                                   float* sum, float* out)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  const memory::desc md({rows, hidden}, memory::data_type::f32, memory::format_tag::ab);
  // oneDNN takes non-const handles; it only reads the sources.
  residual_ = memory(md, engine_, const_cast<float*>(residual));
  sublayer_ = memory(md, engine_, const_cast<float*>(sublayer));
  sum_ = memory(md, engine_, sum);
  out_ = memory(md, engine_, out);

  const dnnl::binary::desc add_desc(dnnl::algorithm::binary_add, md, md, md);
  add_ = dnnl::binary(dnnl::binary::primitive_desc(add_desc, engine_));

  const dnnl::layer_normalization_forward::desc norm_desc(
      dnnl::prop_kind::forward_inference, md, eps, dnnl::normalization_flags::use_scale_shift);
  const dnnl::layer_normalization_forward::primitive_desc norm_pd(norm_desc, engine_);
  norm_ = dnnl::layer_normalization_forward(norm_pd);
  // Scale and shift are one [2, hidden] tensor in the 2.x API.
  scale_shift_ = memory(norm_pd.weights_desc(), engine_);
  float* ss = static_cast<float*>(scale_shift_.get_data_handle());
  std::copy(gamma, gamma + hidden, ss);
  std::copy(beta, beta + hidden, ss + hidden);
  mean_ = memory(norm_pd.mean_desc(), engine_);
  variance_ = memory(norm_pd.variance_desc(), engine_);
}

void DnnlAddLayerNorm::Run() {
  add_.execute(stream_,
               {{DNNL_ARG_SRC_0, residual_}, {DNNL_ARG_SRC_1, sublayer_}, {DNNL_ARG_DST, sum_}});
  norm_.execute(stream_, {{DNNL_ARG_SRC, sum_},
                          {DNNL_ARG_DST, out_},
                          {DNNL_ARG_SCALE_SHIFT, scale_shift_},
                          {DNNL_ARG_MEAN, mean_},
                          {DNNL_ARG_VARIANCE, variance_}});
  stream_.wait();
}

}  // namespace engine::bench
