// The vector kernels instantiated for AVX-512 (this file alone is
// compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma).
#include "kernels/isa_kernels.h"
#include "kernels/vec_avx512.h"
#include "kernels/vec_kernels.h"

namespace engine::kernels::detail {

template <>
void AddLayerNormRows<Isa::kAvx512>(const AddLayerNormArgs& args, int64_t begin, int64_t end) {
  vec::AddLayerNormRows<avx512::Vec>(args, begin, end);
}

template <>
void ScaledSoftmaxRows<Isa::kAvx512>(float* x, int64_t begin, int64_t end, int64_t cols,
                                     float scale) {
  vec::ScaledSoftmaxRows<avx512::Vec>(x, begin, end, cols, scale);
}

}  // namespace engine::kernels::detail
