// The attention kernels instantiated for Avx512 (this file alone is
// compiled with that ISA's flags; see CMakeLists.txt). Head sizes past
// vec::kMaxPackedHeadSize go to the scalar kernels.
#include "kernels/attention_isa.h"
#include "kernels/attention_vec.h"
#include "kernels/vec_avx512.h"

namespace engine::kernels::detail {

template <>
void AttentionScores<Isa::kAvx512>(const AttentionHeadArgs& args, int64_t row_begin,
                                   int64_t row_end, float* scores) {
  if (args.head_size > vec::kMaxPackedHeadSize) {
    AttentionScores<Isa::kScalar>(args, row_begin, row_end, scores);
    return;
  }
  vec::AttentionScores<avx512::Vec>(args, row_begin, row_end, scores);
}

template <>
void AttentionContext<Isa::kAvx512>(const AttentionHeadArgs& args, int64_t row_begin,
                                    int64_t row_end, const float* probs) {
  vec::AttentionContext<avx512::Vec>(args, row_begin, row_end, probs);
}

}  // namespace engine::kernels::detail
