// The vector kernels instantiated for AVX2 + FMA (this file alone is
// compiled with -mavx2 -mfma).
#include "kernels/isa_kernels.h"
#include "kernels/vec_avx2.h"
#include "kernels/vec_kernels.h"

namespace engine::kernels::detail {

template <>
void AddLayerNormRows<Isa::kAvx2>(const AddLayerNormArgs& args, int64_t begin, int64_t end) {
  vec::AddLayerNormRows<avx2::Vec>(args, begin, end);
}

template <>
void ScaledSoftmaxRows<Isa::kAvx2>(float* x, int64_t begin, int64_t end, int64_t cols,
                                   float scale) {
  vec::ScaledSoftmaxRows<avx2::Vec>(x, begin, end, cols, scale);
}

}  // namespace engine::kernels::detail
