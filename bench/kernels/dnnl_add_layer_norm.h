// The unfused peer of the fused kernel: a oneDNN binary add (residual +
// sublayer into a temporary) followed by a oneDNN layer normalization with
// scale and shift. Primitives are created once, in the constructor.
#pragma once

#include <cstdint>

#include "oneapi/dnnl/dnnl.hpp"

namespace engine::bench {

class DnnlAddLayerNorm {
 public:
  // gamma and beta are copied; the other pointers are used by every Run.
  DnnlAddLayerNorm(int64_t rows, int64_t hidden, float eps, const float* gamma, const float* beta,
                   const float* residual, const float* sublayer, float* sum, float* out);

  // out = LayerNorm(residual + sublayer), via `sum`; blocks until done.
  void Run();

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::memory residual_, sublayer_, sum_, out_, scale_shift_, mean_, variance_;
  dnnl::binary add_;
  dnnl::layer_normalization_forward norm_;
};

}  // namespace engine::bench
