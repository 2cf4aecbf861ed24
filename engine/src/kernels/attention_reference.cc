// Scalar attention kernels: the fallback for CPUs without AVX2 (and for
// head sizes past vec::kMaxPackedHeadSize) and the oracle of the tests.
// Plain loops in float, sums in index order.
#include <cstdint>

#include "kernels/attention_isa.h"

namespace engine::kernels::detail {

template <>
void AttentionScores<Isa::kScalar>(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                                   float* scores) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* q = a.q + r * a.qkv_stride;
    float* s = scores + (r - row_begin) * a.length;
    for (int64_t j = 0; j < a.length; ++j) {
      const float* k = a.k + j * a.qkv_stride;
      float dot = 0.0f;
      for (int64_t c = 0; c < a.head_size; ++c) dot += q[c] * k[c];
      s[j] = a.position_bias != nullptr ? dot + a.position_bias[j - r] : dot;
    }
  }
}

template <>
void AttentionContext<Isa::kScalar>(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                                    const float* probs) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* p = probs + (r - row_begin) * a.length;
    float* out = a.context + r * a.context_stride;
    for (int64_t c = 0; c < a.head_size; ++c) out[c] = 0.0f;
    for (int64_t j = 0; j < a.length; ++j) {
      const float* v = a.v + j * a.qkv_stride;
      for (int64_t c = 0; c < a.head_size; ++c) out[c] += p[j] * v[c];
    }
  }
}

}  // namespace engine::kernels::detail
