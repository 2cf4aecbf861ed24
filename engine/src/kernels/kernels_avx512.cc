// The vector kernels instantiated for AVX-512 (this file alone is
// compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma).
#include "kernels/isa_kernels.h"
#include "kernels/vec_avx512.h"
#include "kernels/vec_int8_kernels.h"
#include "kernels/vec_kernels.h"
#include "kernels/vec_q_avx512.h"

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

template <>
void QuantizeRows<Isa::kAvx512>(const float* x, int64_t cols, const QuantizedRows& out,
                                int64_t begin, int64_t end) {
  vec::QuantizeRows<avx512::QVec>(x, cols, out, begin, end);
}

template <>
void DequantizeRows<Isa::kAvx512>(const Int8Accumulator& in, int64_t cols, float* out,
                                  int64_t begin, int64_t end) {
  vec::DequantizeRows<avx512::QVec>(in, cols, out, begin, end);
}

template <>
void DequantizeActivateQuantizeRows<Isa::kAvx512>(const Int8Accumulator& in, int64_t cols,
                                                  Eltwise act, const QuantizedRows& out,
                                                  int64_t begin, int64_t end) {
  vec::DequantizeActivateQuantizeRows<avx512::QVec>(in, cols, act, out, begin, end);
}

template <>
void AddLayerNormInt8Rows<Isa::kAvx512>(const AddLayerNormInt8Args& args, int64_t begin,
                                        int64_t end) {
  vec::AddLayerNormInt8Rows<avx512::QVec>(args, begin, end);
}

template <>
void ActivateRows<Isa::kAvx512>(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end) {
  vec::ActivateRows<avx512::QVec>(x, cols, act, begin, end);
}

template <>
void GatedActivationRows<Isa::kAvx512>(const float* x, int64_t cols, Eltwise act, float* out,
                                       int64_t begin, int64_t end) {
  vec::GatedActivationRows<avx512::QVec>(x, cols, act, out, begin, end);
}

template <>
void DequantizeGateQuantizeRows<Isa::kAvx512>(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                              const QuantizedRows& out,
                                              const QuantizedRows& residual, int64_t begin,
                                              int64_t end) {
  vec::DequantizeGateQuantizeRows<avx512::QVec>(in, cols, act, out, residual, begin, end);
}

}  // namespace engine::kernels::detail
