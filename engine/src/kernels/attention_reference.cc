// Scalar attention kernels: the fallback for CPUs without AVX2 (and for
// head sizes past vec::kMaxPackedHeadSize) and the oracle of the tests.
// Plain loops in float, sums in index order (the online softmax's block
// sum compensated).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/attention_isa.h"

namespace engine::kernels::detail {

template <>
void AttentionScores<Isa::kScalar>(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                                   int64_t key_begin, int64_t key_end, float* scores,
                                   int64_t scores_stride) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* q = a.q + r * a.qkv_stride;
    float* s = scores + (r - row_begin) * scores_stride;
    for (int64_t j = key_begin; j < key_end; ++j) {
      const float* k = a.k + j * a.qkv_stride;
      float dot = 0.0f;
      for (int64_t c = 0; c < a.head_size; ++c) dot += q[c] * k[c];
      s[j - key_begin] = a.position_bias != nullptr ? dot + a.position_bias[j - r] : dot;
    }
  }
}

template <>
void OnlineSoftmax<Isa::kScalar>(float* s, int64_t rows, int64_t cols, int64_t stride, float scale,
                                 int64_t band_begin, int64_t band_end, float* row_max,
                                 float* row_sum, float* rescale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* x = s + r * stride;
    const int64_t lo = std::min(cols, std::max<int64_t>(0, band_begin + r));
    const int64_t hi = std::min(cols, std::max<int64_t>(lo, band_end + r));
    for (int64_t j = 0; j < lo; ++j) x[j] = 0.0f;
    for (int64_t j = hi; j < cols; ++j) x[j] = 0.0f;
    if (lo == hi) {
      rescale[r] = 1.0f;
      continue;
    }
    float max = row_max[r];
    for (int64_t j = lo; j < hi; ++j) max = std::fmax(max, scale * x[j]);
    // exp(-inf) = 0 on a row's first block; exp(0) = 1 when the max held.
    const float alpha = std::exp(row_max[r] - max);
    float sum = 0.0f, carry = 0.0f;  // Kahan
    for (int64_t j = lo; j < hi; ++j) {
      x[j] = std::exp(scale * x[j] - max);
      const float y = x[j] - carry;
      const float t = sum + y;
      carry = (t - sum) - y;
      sum = t;
    }
    row_max[r] = max;
    row_sum[r] = row_sum[r] * alpha + sum;
    rescale[r] = alpha;
  }
}

template <>
void AttentionContext<Isa::kScalar>(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                                    int64_t key_begin, int64_t key_end, const float* probs,
                                    int64_t probs_stride, ContextScale scale) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* p = probs + (r - row_begin) * probs_stride;
    float* out = a.context + r * a.context_stride;
    const float keep = scale.keep != nullptr ? scale.keep[r - row_begin] : 0.0f;
    for (int64_t c = 0; c < a.head_size; ++c) out[c] = scale.keep != nullptr ? keep * out[c] : 0.0f;
    for (int64_t j = key_begin; j < key_end; ++j) {
      const float* v = a.v + j * a.qkv_stride;
      for (int64_t c = 0; c < a.head_size; ++c) out[c] += p[j - key_begin] * v[c];
    }
    if (scale.finish != nullptr) {
      for (int64_t c = 0; c < a.head_size; ++c) out[c] *= scale.finish[r - row_begin];
    }
  }
}

template <>
void RotateRows<Isa::kScalar>(const RotaryView& rotary, const float* x, int64_t stride,
                              int64_t row_begin, int64_t row_end, int64_t head_size, float* out) {
  const int64_t pairs = rotary.pairs;
  // Pair p is (first + p * step, first + p * step + offset).
  const int64_t step = rotary.interleaved ? 2 : 1;
  const int64_t offset = rotary.interleaved ? 1 : pairs;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* in = x + r * stride;
    float* o = out + (r - row_begin) * head_size;
    const float* cos = rotary.cos + r * pairs;
    const float* sin = rotary.sin + r * pairs;
    for (int64_t c = 2 * pairs; c < head_size; ++c) o[c] = in[c];  // past the rotated share
    for (int64_t p = 0; p < pairs; ++p) {
      const float x1 = in[p * step];
      const float x2 = in[p * step + offset];
      o[p * step] = x1 * cos[p] - x2 * sin[p];
      o[p * step + offset] = x2 * cos[p] + x1 * sin[p];
    }
  }
}

}  // namespace engine::kernels::detail
