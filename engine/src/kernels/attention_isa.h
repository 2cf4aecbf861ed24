// Per-ISA attention kernels behind attention_kernels.h; each specialization
// is defined in the source compiled for its ISA (attention_reference.cc,
// attention_avx2.cc, attention_avx512.cc).
#pragma once

#include <cstdint>

#include "kernels/attention_kernels.h"

namespace engine::kernels::detail {

template <Isa kIsa>
void AttentionScores(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                     float* scores);
template <Isa kIsa>
void AttentionContext(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                      const float* probs);

template <>
void AttentionScores<Isa::kScalar>(const AttentionHeadArgs&, int64_t, int64_t, float*);
template <>
void AttentionScores<Isa::kAvx2>(const AttentionHeadArgs&, int64_t, int64_t, float*);
template <>
void AttentionScores<Isa::kAvx512>(const AttentionHeadArgs&, int64_t, int64_t, float*);

template <>
void AttentionContext<Isa::kScalar>(const AttentionHeadArgs&, int64_t, int64_t, const float*);
template <>
void AttentionContext<Isa::kAvx2>(const AttentionHeadArgs&, int64_t, int64_t, const float*);
template <>
void AttentionContext<Isa::kAvx512>(const AttentionHeadArgs&, int64_t, int64_t, const float*);

}  // namespace engine::kernels::detail
