// The vector kernels instantiated for AVX2 + FMA (this file alone is
// compiled with -mavx2 -mfma).
#include "kernels/isa_kernels.h"
#include "kernels/vec_avx2.h"
#include "kernels/vec_int8_kernels.h"
#include "kernels/vec_kernels.h"
#include "kernels/vec_q_avx2.h"

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

template <>
void QuantizeRows<Isa::kAvx2>(const float* x, int64_t cols, const QuantizedRows& out, int64_t begin,
                              int64_t end) {
  vec::QuantizeRows<avx2::QVec>(x, cols, out, begin, end);
}

template <>
void DequantizeRows<Isa::kAvx2>(const Int8Accumulator& in, int64_t cols, float* out, int64_t begin,
                                int64_t end) {
  vec::DequantizeRows<avx2::QVec>(in, cols, out, begin, end);
}

template <>
void DequantizeActivateQuantizeRows<Isa::kAvx2>(const Int8Accumulator& in, int64_t cols,
                                                Eltwise act, const QuantizedRows& out,
                                                int64_t begin, int64_t end) {
  vec::DequantizeActivateQuantizeRows<avx2::QVec>(in, cols, act, out, begin, end);
}

template <>
void AddLayerNormInt8Rows<Isa::kAvx2>(const AddLayerNormInt8Args& args, int64_t begin,
                                      int64_t end) {
  vec::AddLayerNormInt8Rows<avx2::QVec>(args, begin, end);
}

template <>
void ActivateRows<Isa::kAvx2>(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end) {
  vec::ActivateRows<avx2::QVec>(x, cols, act, begin, end);
}

template <>
void GatedActivationRows<Isa::kAvx2>(const float* x, int64_t cols, Eltwise act, float* out,
                                     int64_t begin, int64_t end) {
  vec::GatedActivationRows<avx2::QVec>(x, cols, act, out, begin, end);
}

template <>
void DequantizeGateQuantizeRows<Isa::kAvx2>(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                            const QuantizedRows& out, const QuantizedRows& residual,
                                            int64_t begin, int64_t end) {
  vec::DequantizeGateQuantizeRows<avx2::QVec>(in, cols, act, out, residual, begin, end);
}

}  // namespace engine::kernels::detail
