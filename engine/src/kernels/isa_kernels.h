// Per-ISA row kernels behind the dispatching entry points of kernels.h.
// Each specialization is defined in the source compiled for its ISA
// (reference.cc, and kernels_per_isa.cc's unit per vector ISA);
// kernels.cc picks one.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace engine::kernels::detail {

// Rows [begin, end) of `args`, on the calling thread.
template <Isa kIsa>
void AddLayerNormRows(const AddLayerNormArgs& args, int64_t begin, int64_t end);

// Rows [begin, end) of the row-major [*, cols] matrix `x`, in place.
template <Isa kIsa>
void ScaledSoftmaxRows(float* x, int64_t begin, int64_t end, int64_t cols, float scale);

template <>
void AddLayerNormRows<Isa::kScalar>(const AddLayerNormArgs&, int64_t, int64_t);
template <>
void AddLayerNormRows<Isa::kAvx2>(const AddLayerNormArgs&, int64_t, int64_t);
template <>
void AddLayerNormRows<Isa::kAvx512>(const AddLayerNormArgs&, int64_t, int64_t);

template <>
void ScaledSoftmaxRows<Isa::kScalar>(float*, int64_t, int64_t, int64_t, float);
template <>
void ScaledSoftmaxRows<Isa::kAvx2>(float*, int64_t, int64_t, int64_t, float);
template <>
void ScaledSoftmaxRows<Isa::kAvx512>(float*, int64_t, int64_t, int64_t, float);

// int8 kernels (kernels.h), rows [begin, end) on the calling thread.
template <Isa kIsa>
void QuantizeRows(const float* x, int64_t cols, const QuantizedRows& out, int64_t begin,
                  int64_t end);
template <Isa kIsa>
void DequantizeRows(const Int8Accumulator& in, int64_t cols, float* out, int64_t begin,
                    int64_t end);
template <Isa kIsa>
void DequantizeActivateQuantizeRows(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                    const QuantizedRows& out, int64_t begin, int64_t end);
template <Isa kIsa>
void AddLayerNormInt8Rows(const AddLayerNormInt8Args& args, int64_t begin, int64_t end);
template <Isa kIsa>
void ActivateRows(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end);
template <Isa kIsa>
void GatedActivationRows(const float* x, int64_t cols, Eltwise act, float* out, int64_t begin,
                         int64_t end);
template <Isa kIsa>
void DequantizeGateQuantizeRows(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                const QuantizedRows& out, const QuantizedRows& residual,
                                int64_t begin, int64_t end);

#define ENGINE_DECLARE_INT8_KERNELS(isa)                                                    \
  template <>                                                                               \
  void QuantizeRows<isa>(const float*, int64_t, const QuantizedRows&, int64_t, int64_t);    \
  template <>                                                                               \
  void DequantizeRows<isa>(const Int8Accumulator&, int64_t, float*, int64_t, int64_t);      \
  template <>                                                                               \
  void DequantizeActivateQuantizeRows<isa>(const Int8Accumulator&, int64_t, Eltwise,        \
                                           const QuantizedRows&, int64_t, int64_t);         \
  template <>                                                                               \
  void AddLayerNormInt8Rows<isa>(const AddLayerNormInt8Args&, int64_t, int64_t);            \
  template <>                                                                               \
  void ActivateRows<isa>(float*, int64_t, Eltwise, int64_t, int64_t);                       \
  template <>                                                                               \
  void GatedActivationRows<isa>(const float*, int64_t, Eltwise, float*, int64_t, int64_t);  \
  template <>                                                                               \
  void DequantizeGateQuantizeRows<isa>(const Int8Accumulator&, int64_t, Eltwise,            \
                                       const QuantizedRows&, const QuantizedRows&, int64_t, \
                                       int64_t);

ENGINE_DECLARE_INT8_KERNELS(Isa::kScalar)
ENGINE_DECLARE_INT8_KERNELS(Isa::kAvx2)
ENGINE_DECLARE_INT8_KERNELS(Isa::kAvx512)
#undef ENGINE_DECLARE_INT8_KERNELS

}  // namespace engine::kernels::detail
