// Per-ISA attention kernels behind attention_kernels.h; each specialization
// is defined in the source compiled for its ISA (attention_reference.cc, and
// attention_per_isa.cc's unit per vector ISA).
#pragma once

#include <cstdint>

#include "kernels/attention_kernels.h"

namespace engine::kernels::detail {

template <Isa kIsa>
void AttentionScores(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                     int64_t key_begin, int64_t key_end, float* scores, int64_t scores_stride);
template <Isa kIsa>
void OnlineSoftmax(float* s, int64_t rows, int64_t cols, int64_t stride, float scale,
                   int64_t band_begin, int64_t band_end, float* row_max, float* row_sum,
                   float* rescale);
template <Isa kIsa>
void AttentionContext(const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                      int64_t key_begin, int64_t key_end, const float* probs, int64_t probs_stride,
                      ContextScale scale);

template <Isa kIsa>
void RotateRows(const RotaryView& rotary, const float* x, int64_t stride, int64_t row_begin,
                int64_t row_end, int64_t head_size, float* out);

#define ENGINE_DECLARE_ATTENTION_KERNELS(isa)                                                     \
  template <>                                                                                     \
  void AttentionScores<isa>(const AttentionHeadArgs&, int64_t, int64_t, int64_t, int64_t, float*, \
                            int64_t);                                                             \
  template <>                                                                                     \
  void OnlineSoftmax<isa>(float*, int64_t, int64_t, int64_t, float, int64_t, int64_t, float*,     \
                          float*, float*);                                                        \
  template <>                                                                                     \
  void AttentionContext<isa>(const AttentionHeadArgs&, int64_t, int64_t, int64_t, int64_t,        \
                             const float*, int64_t, ContextScale);                                \
  template <>                                                                                     \
  void RotateRows<isa>(const RotaryView&, const float*, int64_t, int64_t, int64_t, int64_t,       \
                       float*);

ENGINE_DECLARE_ATTENTION_KERNELS(Isa::kScalar)
ENGINE_DECLARE_ATTENTION_KERNELS(Isa::kAvx2)
ENGINE_DECLARE_ATTENTION_KERNELS(Isa::kAvx512)
#undef ENGINE_DECLARE_ATTENTION_KERNELS

}  // namespace engine::kernels::detail
