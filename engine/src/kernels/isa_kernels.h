// Per-ISA row kernels behind the dispatching entry points of kernels.h.
// Each specialization is defined in the source compiled for its ISA
// (reference.cc, kernels_avx2.cc, kernels_avx512.cc); kernels.cc picks one.
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

}  // namespace engine::kernels::detail
