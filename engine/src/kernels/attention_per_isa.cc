// The attention kernels of attention_isa.h for one vector ISA (unit_isa.h),
// from their generic forms (attention_vec.h). Head sizes past
// vec::kMaxPackedHeadSize go to the scalar kernels (the packs on the stack
// are sized for it).
#include "kernels/attention_isa.h"
#include "kernels/attention_vec.h"
#include "kernels/unit_isa.h"

namespace engine::kernels::detail {

template <>
void AttentionScores<kUnitIsa>(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                               int64_t key_begin, int64_t key_end, float* scores,
                               int64_t scores_stride) {
  if (args.head_size > vec::kMaxPackedHeadSize) {
    AttentionScores<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, scores,
                                  scores_stride);
    return;
  }
  vec::AttentionScores<UnitVec>(args, row_begin, row_end, key_begin, key_end, scores,
                                scores_stride);
}

template <>
void OnlineSoftmax<kUnitIsa>(float* s, int64_t rows, int64_t cols, int64_t stride, float scale,
                             int64_t band_begin, int64_t band_end, float* row_max, float* row_sum,
                             float* rescale) {
  vec::OnlineSoftmax<UnitVec>(s, rows, cols, stride, scale, band_begin, band_end, row_max, row_sum,
                              rescale);
}

template <>
void AttentionContext<kUnitIsa>(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                                int64_t key_begin, int64_t key_end, const float* probs,
                                int64_t probs_stride, ContextScale scale) {
  if (args.head_size > vec::kMaxPackedHeadSize) {
    AttentionContext<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, probs,
                                   probs_stride, scale);
    return;
  }
  vec::AttentionContext<UnitVec>(args, row_begin, row_end, key_begin, key_end, probs, probs_stride,
                                 scale);
}

template <>
void RotateRows<kUnitIsa>(const RotaryView& rotary, const float* x, int64_t stride,
                          int64_t row_begin, int64_t row_end, int64_t head_size, float* out) {
  if (rotary.interleaved) {
    RotateRows<Isa::kScalar>(rotary, x, stride, row_begin, row_end, head_size, out);
    return;
  }
  vec::RotateHalfRows<UnitVec>(rotary, x, stride, row_begin, row_end, head_size, out);
}

}  // namespace engine::kernels::detail
