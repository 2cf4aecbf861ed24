// The vector kernels of isa_kernels.h for one vector ISA (unit_isa.h), from
// their generic forms (vec_kernels.h, vec_int8_kernels.h).
#include "kernels/isa_kernels.h"
#include "kernels/unit_isa.h"
#include "kernels/vec_int8_kernels.h"
#include "kernels/vec_kernels.h"

namespace engine::kernels::detail {

template <>
void AddLayerNormRows<kUnitIsa>(const AddLayerNormArgs& args, int64_t begin, int64_t end) {
  vec::AddLayerNormRows<UnitVec>(args, begin, end);
}

template <>
void ScaledSoftmaxRows<kUnitIsa>(float* x, int64_t begin, int64_t end, int64_t cols, float scale) {
  vec::ScaledSoftmaxRows<UnitVec>(x, begin, end, cols, scale);
}

template <>
void QuantizeRows<kUnitIsa>(const float* x, int64_t cols, const QuantizedRows& out, int64_t begin,
                            int64_t end) {
  vec::QuantizeRows<UnitQVec>(x, cols, out, begin, end);
}

template <>
void DequantizeRows<kUnitIsa>(const Int8Accumulator& in, int64_t cols, float* out, int64_t begin,
                              int64_t end) {
  vec::DequantizeRows<UnitQVec>(in, cols, out, begin, end);
}

template <>
void DequantizeActivateQuantizeRows<kUnitIsa>(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                              const QuantizedRows& out, int64_t begin,
                                              int64_t end) {
  vec::DequantizeActivateQuantizeRows<UnitQVec>(in, cols, act, out, begin, end);
}

template <>
void AddLayerNormInt8Rows<kUnitIsa>(const AddLayerNormInt8Args& args, int64_t begin, int64_t end) {
  vec::AddLayerNormInt8Rows<UnitQVec>(args, begin, end);
}

template <>
void ActivateRows<kUnitIsa>(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end) {
  vec::ActivateRows<UnitQVec>(x, cols, act, begin, end);
}

template <>
void GatedActivationRows<kUnitIsa>(const float* x, int64_t cols, Eltwise act, float* out,
                                   int64_t begin, int64_t end) {
  vec::GatedActivationRows<UnitQVec>(x, cols, act, out, begin, end);
}

template <>
void DequantizeGateQuantizeRows<kUnitIsa>(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                          const QuantizedRows& out, const QuantizedRows& residual,
                                          int64_t begin, int64_t end) {
  vec::DequantizeGateQuantizeRows<UnitQVec>(in, cols, act, out, residual, begin, end);
}

}  // namespace engine::kernels::detail
