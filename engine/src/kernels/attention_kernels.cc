// Run-time dispatch of the attention kernels to the ISA's implementation,
// and the streaming loop over query and key blocks (portable: it only
// sizes blocks and calls the kernels).
#include "kernels/attention_kernels.h"

#include <algorithm>
#include <limits>

#include "kernels/attention_isa.h"

namespace engine::kernels {

void AttentionScoresWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                            int64_t row_end, int64_t key_begin, int64_t key_end, float* scores,
                            int64_t scores_stride) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::AttentionScores<Isa::kAvx512>(args, row_begin, row_end, key_begin, key_end,
                                                   scores, scores_stride);
    case Isa::kAvx2:
      return detail::AttentionScores<Isa::kAvx2>(args, row_begin, row_end, key_begin, key_end,
                                                 scores, scores_stride);
    case Isa::kScalar:
      break;
  }
  detail::AttentionScores<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, scores,
                                        scores_stride);
}

void OnlineSoftmaxWithIsa(Isa isa, float* s, int64_t rows, int64_t cols, int64_t stride,
                          float scale, int64_t band_begin, int64_t band_end, float* row_max,
                          float* row_sum, float* rescale) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::OnlineSoftmax<Isa::kAvx512>(s, rows, cols, stride, scale, band_begin, band_end,
                                                 row_max, row_sum, rescale);
    case Isa::kAvx2:
      return detail::OnlineSoftmax<Isa::kAvx2>(s, rows, cols, stride, scale, band_begin, band_end,
                                               row_max, row_sum, rescale);
    case Isa::kScalar:
      break;
  }
  detail::OnlineSoftmax<Isa::kScalar>(s, rows, cols, stride, scale, band_begin, band_end, row_max,
                                      row_sum, rescale);
}

void AttentionContextWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                             int64_t row_end, int64_t key_begin, int64_t key_end,
                             const float* probs, int64_t probs_stride, ContextScale scale) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::AttentionContext<Isa::kAvx512>(args, row_begin, row_end, key_begin, key_end,
                                                    probs, probs_stride, scale);
    case Isa::kAvx2:
      return detail::AttentionContext<Isa::kAvx2>(args, row_begin, row_end, key_begin, key_end,
                                                  probs, probs_stride, scale);
    case Isa::kScalar:
      break;
  }
  detail::AttentionContext<Isa::kScalar>(args, row_begin, row_end, key_begin, key_end, probs,
                                         probs_stride, scale);
}

void RotateRows(const RotaryView& rotary, const float* x, int64_t stride, int64_t row_begin,
                int64_t row_end, int64_t head_size, float* out) {
  detail::RotateRows<Isa::kScalar>(rotary, x, stride, row_begin, row_end, head_size, out);
}

void RotateRowsWithIsa(Isa isa, const RotaryView& rotary, const float* x, int64_t stride,
                       int64_t row_begin, int64_t row_end, int64_t head_size, float* out) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::RotateRows<Isa::kAvx512>(rotary, x, stride, row_begin, row_end, head_size,
                                              out);
    case Isa::kAvx2:
      return detail::RotateRows<Isa::kAvx2>(rotary, x, stride, row_begin, row_end, head_size, out);
    case Isa::kScalar:
      break;
  }
  RotateRows(rotary, x, stride, row_begin, row_end, head_size, out);
}

void AttentionWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                      float scale, KeyBand band, float* scratch) {
  constexpr int64_t kRows = kAttentionQueryRows;
  constexpr int64_t kKeys = kAttentionKeyBlock;
  const int64_t length = args.length;
  if (row_end <= row_begin) return;
  // A bound that reaches every key is no bound.
  const int64_t before = band.before >= length - 1 ? -1 : band.before;
  const int64_t after = band.after >= length - 1 ? -1 : band.after;
  float* scores = scratch;
  float* row_max = scratch + kRows * kKeys;
  float* row_sum = row_max + kRows;
  float* rescale = row_sum + kRows;
  // Rotary: the scores kernel reads Q and K turned, from dense blocks here.
  const bool rotary = args.rotary.cos != nullptr;
  const int64_t d = args.head_size;
  float* q_turned = scratch + kAttentionScratchFloats;
  float* k_turned = q_turned + kRows * d;
  AttentionHeadArgs turned = args;
  // A window's block of r rows computes r + 2w keys per row for 2w + 1
  // useful ones: blocks of about w rows (at least 16, for the tiles) waste
  // less than full ones.
  const int64_t window = before >= 0 && after >= 0 ? std::max(before, after) : 0;
  const int64_t max_rows = window > 0 ? std::clamp<int64_t>(window, 16, kRows) : kRows;
  // Query blocks of equal size: a short last block would re-read every key
  // for a few rows.
  const int64_t total = row_end - row_begin;
  const int64_t query_blocks = (total + max_rows - 1) / max_rows;
  const int64_t block_rows = (total + query_blocks - 1) / query_blocks;
  for (int64_t qb = row_begin; qb < row_end; qb += block_rows) {
    const int64_t qe = std::min(row_end, qb + block_rows);
    const int64_t rows = qe - qb;
    // Keys some row of the block may see: [qb - before, qe - 1 + after].
    const int64_t key_lo = before >= 0 ? std::max<int64_t>(0, qb - before) : 0;
    const int64_t visible = args.visible_keys > 0 ? std::min(args.visible_keys, length) : length;
    const int64_t key_hi = std::min(visible, after >= 0 ? std::min(length, qe + after) : length);
    if (key_lo >= key_hi) {  // a window wholly past the visible keys: nothing to attend to
      for (int64_t r = qb; r < qe; ++r)
        std::fill_n(args.context + r * args.context_stride, d, 0.0f);
      continue;
    }
    std::fill(row_max, row_max + rows, -std::numeric_limits<float>::infinity());
    std::fill(row_sum, row_sum + rows, 0.0f);
    for (int64_t kb = key_lo; kb < key_hi; kb += kKeys) {
      const int64_t ke = std::min(key_hi, kb + kKeys);
      const int64_t keys = ke - kb;
      // A short last block packed densely, rows on 64-byte boundaries.
      const int64_t stride = (keys + 15) / 16 * 16;
      if (rotary) {
        // Rows [0, rows) of q_turned are query rows qb.., rows [0, keys) of
        // k_turned keys kb..; the bias is indexed by key - query as before.
        if (kb == key_lo) {
          RotateRowsWithIsa(isa, args.rotary, args.q, args.qkv_stride, qb, qe, d, q_turned);
        }
        RotateRowsWithIsa(isa, args.rotary, args.k, args.qkv_stride, kb, ke, d, k_turned);
        turned.q = q_turned;
        turned.k = k_turned;
        turned.qkv_stride = d;
        if (args.position_bias != nullptr) turned.position_bias = args.position_bias + (kb - qb);
        AttentionScoresWithIsa(isa, turned, 0, rows, 0, keys, scores, stride);
      } else {
        AttentionScoresWithIsa(isa, args, qb, qe, kb, ke, scores, stride);
      }
      // Row qb + r sees keys [qb + r - before, qb + r + after]: a band in
      // block columns.
      const int64_t band_begin = before >= 0 ? qb - before - kb : -rows;
      const int64_t band_end = after >= 0 ? qb + after + 1 - kb : keys;
      OnlineSoftmaxWithIsa(isa, scores, rows, keys, stride, scale, band_begin, band_end, row_max,
                           row_sum, rescale);
      ContextScale context_scale;
      if (kb != key_lo) context_scale.keep = rescale;
      if (ke == key_hi) {
        // A row sees at least itself, or with hidden keys the first of them,
        // so l > 0; but a window past the visible keys sees none: a zero
        // context, not 0 / 0.
        for (int64_t r = 0; r < rows; ++r) {
          row_sum[r] = row_sum[r] > 0.0f ? 1.0f / row_sum[r] : 0.0f;
        }
        context_scale.finish = row_sum;
      }
      AttentionContextWithIsa(isa, args, qb, qe, kb, ke, scores, stride, context_scale);
    }
  }
}

}  // namespace engine::kernels
