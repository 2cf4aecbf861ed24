// Run-time dispatch of the attention kernels to the ISA's implementation.
#include "kernels/attention_kernels.h"

#include "kernels/attention_isa.h"

namespace engine::kernels {

void AttentionScoresWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                            int64_t row_end, float* scores) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::AttentionScores<Isa::kAvx512>(args, row_begin, row_end, scores);
    case Isa::kAvx2:
      return detail::AttentionScores<Isa::kAvx2>(args, row_begin, row_end, scores);
    case Isa::kScalar:
      break;
  }
  detail::AttentionScores<Isa::kScalar>(args, row_begin, row_end, scores);
}

void AttentionContextWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                             int64_t row_end, const float* probs) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::AttentionContext<Isa::kAvx512>(args, row_begin, row_end, probs);
    case Isa::kAvx2:
      return detail::AttentionContext<Isa::kAvx2>(args, row_begin, row_end, probs);
    case Isa::kScalar:
      break;
  }
  detail::AttentionContext<Isa::kScalar>(args, row_begin, row_end, probs);
}

void AttentionRowsWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                          int64_t row_end, float scale, float* scores) {
  AttentionScoresWithIsa(isa, args, row_begin, row_end, scores);
  ScaledSoftmaxWithIsa(isa, scores, row_end - row_begin, args.length, scale);
  AttentionContextWithIsa(isa, args, row_begin, row_end, scores);
}

}  // namespace engine::kernels
