// The attention kernels instantiated for Avx512 (this file alone is
// compiled with that ISA's flags; see CMakeLists.txt). Head sizes past
// vec::kMaxPackedHeadSize go to the scalar kernels (the packs on the stack
// are sized for it).
#include "kernels/attention_isa.h"
#include "kernels/attention_vec.h"
#include "kernels/vec_avx512.h"

namespace engine::kernels::detail {

template <>
void AttentionScores<Isa::kAvx512>(const AttentionHeadArgs& args, int64_t row_begin,
                                   int64_t row_end, int64_t key_begin, int64_t key_end,
                                   float* scores, int64_t scores_stride) {
  if (args.head_size > vec::kMaxPackedHeadSize) {
    AttentionScores<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, scores,
                                  scores_stride);
    return;
  }
  vec::AttentionScores<avx512::Vec>(args, row_begin, row_end, key_begin, key_end, scores,
                                    scores_stride);
}

template <>
void OnlineSoftmax<Isa::kAvx512>(float* s, int64_t rows, int64_t cols, int64_t stride, float scale,
                                 int64_t band_begin, int64_t band_end, float* row_max,
                                 float* row_sum, float* rescale) {
  vec::OnlineSoftmax<avx512::Vec>(s, rows, cols, stride, scale, band_begin, band_end, row_max,
                                  row_sum, rescale);
}

template <>
void AttentionContext<Isa::kAvx512>(const AttentionHeadArgs& args, int64_t row_begin,
                                    int64_t row_end, int64_t key_begin, int64_t key_end,
                                    const float* probs, int64_t probs_stride, ContextScale scale) {
  if (args.head_size > vec::kMaxPackedHeadSize) {
    AttentionContext<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, probs,
                                   probs_stride, scale);
    return;
  }
  vec::AttentionContext<avx512::Vec>(args, row_begin, row_end, key_begin, key_end, probs,
                                     probs_stride, scale);
}

template <>
void RotateRows<Isa::kAvx512>(const RotaryView& rotary, const float* x, int64_t stride,
                              int64_t row_begin, int64_t row_end, int64_t head_size, float* out) {
  if (rotary.interleaved) {
    RotateRows<Isa::kScalar>(rotary, x, stride, row_begin, row_end, head_size, out);
    return;
  }
  vec::RotateHalfRows<avx512::Vec>(rotary, x, stride, row_begin, row_end, head_size, out);
}

}  // namespace engine::kernels::detail
