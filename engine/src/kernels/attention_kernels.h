// The attention core of one head of one sequence, on a block of query rows,
// streamed over blocks of keys with an online softmax (memory independent of
// the sequence length):
//   for each block of kAttentionQueryRows query rows,
//     for each block of kAttentionKeyBlock keys (within the rows' window):
//       S = Q K_blk^T (+ position bias)            AttentionScoresWithIsa
//       m, l updated; S = exp(scale S - m)         OnlineSoftmaxWithIsa
//       O = rescale * O + S V_blk                  AttentionContextWithIsa
//     O /= l                                       (fused into the last P V)
// Q, K and V are read in place with a row stride (the fused [tokens, 3H]
// projection: no per-head copies) and the context rows are written in place
// (the [tokens, H] buffer, heads concatenated). Kernels take raw pointers
// and sizes, allocate nothing and run on the calling thread; the caller
// parallelizes over (sequence, head, query block).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace engine::kernels {

// Rotary positions (RoPE) of Q and K: token i's dimension pairs turn by the
// angles of row i of the [positions, pairs] tables; pairs (c, c + pairs)
// (rotate_half) or, interleaved, (2c, 2c + 1). Null cos: none.
struct RotaryView {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t pairs = 0;
  bool interleaved = false;
};

// Rows [row_begin, row_end) of x (row stride `stride`, head_size floats each)
// turned by their positions, into out ([rows, head_size], dense).
void RotateRows(const RotaryView& rotary, const float* x, int64_t stride, int64_t row_begin,
                int64_t row_end, int64_t head_size, float* out);
// The same with the ISA's kernel (rotate_half pairs vectorized).
void RotateRowsWithIsa(Isa isa, const RotaryView& rotary, const float* x, int64_t stride,
                       int64_t row_begin, int64_t row_end, int64_t head_size, float* out);

struct AttentionHeadArgs {
  const float* q = nullptr;  // row 0 of the sequence, this head's columns
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t qkv_stride = 0;  // floats from one token's row to the next in q, k, v
  int64_t length = 0;      // tokens of the sequence (query rows and keys)
  // Keys [visible_keys, length) are attended to by no row (0: none hidden).
  int64_t visible_keys = 0;
  int64_t head_size = 0;
  float* context = nullptr;  // row 0 of the sequence's output, this head's columns
  int64_t context_stride = 0;
  // Optional additive bias by relative distance (MPNet): query row i and
  // key j get position_bias[j - i] added to q[i] . k[j], so it must be
  // valid for offsets -(length - 1) .. length - 1. Null: none.
  const float* position_bias = nullptr;
  // Optional rotary positions: Q and K rows are turned as AttentionWithIsa
  // reads them (into its scratch, a block at a time), so the activations
  // get no pass of their own. The scores and context kernels ignore it.
  RotaryView rotary;
};

// Query rows and keys of one streamed block. 256 x 128: a BERT sequence of
// up to 128 tokens is one key block (no rescaling), every K^T and V pack is
// reused by up to 256 rows, and the 128 KiB scores block stays in L2
// between its three kernels (bench/README.md has the measurements against
// 128 and 256 of each). Sliding windows use blocks of fewer rows (see
// AttentionWithIsa): the keys a block visits are its rows plus 2w.
inline constexpr int64_t kAttentionQueryRows = 256;
inline constexpr int64_t kAttentionKeyBlock = 128;
// Floats of AttentionWithIsa's scratch: the scores block, then the running
// row max, row sum and rescale factor of its rows (a multiple of 16 floats,
// so per-thread scratches do not share cache lines).
inline constexpr int64_t kAttentionScratchFloats =
    kAttentionQueryRows * kAttentionKeyBlock + 3 * kAttentionQueryRows;
static_assert(kAttentionScratchFloats % 16 == 0);
// The scratch AttentionWithIsa needs for heads of `head_size`: with rotary
// positions, also the rotated Q rows of a block and K rows of a key block
// (rounded to 16 floats).
inline constexpr int64_t AttentionScratchFloats(int64_t head_size, bool rotary) {
  return kAttentionScratchFloats +
         (rotary ? ((kAttentionQueryRows + kAttentionKeyBlock) * head_size + 15) / 16 * 16 : 0);
}

// scores[r - row_begin][j - key_begin] = q[r] . k[j] (+ position_bias[j - r])
// for r in [row_begin, row_end) and j in [key_begin, key_end): a row-major
// block with row stride `scores_stride` >= key_end - key_begin.
void AttentionScoresWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                            int64_t row_end, int64_t key_begin, int64_t key_end, float* scores,
                            int64_t scores_stride);

// The online softmax of a [rows, cols] block of scores s (row stride
// `stride`), in place. Row r's valid columns are [band_begin + r,
// band_end + r) clipped to [0, cols) (a sliding window is a band; pass
// band_begin <= -rows and band_end >= cols for all columns); the others
// become 0 and are not read. With x = scale * s over the valid columns,
// row_max[r] and row_sum[r] (running, in/out; start at -inf and 0) become
//   m' = max(m, max x),  l' = l * exp(m - m') + sum exp(x - m'),
// s becomes exp(x - m') and rescale[r] = exp(m - m') (0 on a row's first
// valid block, 1 when the max did not grow or the row has no valid column).
void OnlineSoftmaxWithIsa(Isa isa, float* s, int64_t rows, int64_t cols, int64_t stride,
                          float scale, int64_t band_begin, int64_t band_end, float* row_max,
                          float* row_sum, float* rescale);

// Per-row factors of AttentionContextWithIsa (indexed by r - row_begin).
struct ContextScale {
  // Null: the context rows are overwritten. Else the rows are accumulated
  // into, scaled by keep[r] first (the online softmax's rescale).
  const float* keep = nullptr;
  // Non-null: the result is multiplied by finish[r] when stored (1 / l).
  const float* finish = nullptr;
};

// context[r] = finish[r] * (keep[r] * context[r] + sum_j probs[r - row_begin][j - key_begin] v[j])
// for r in [row_begin, row_end), j in [key_begin, key_end); `probs` has the
// layout of AttentionScoresWithIsa's `scores`.
void AttentionContextWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                             int64_t row_end, int64_t key_begin, int64_t key_end,
                             const float* probs, int64_t probs_stride, ContextScale scale = {});

// The keys each query row sees: row i sees key j iff
// i - before <= j <= i + after, a negative bound meaning no bound on that
// side. Bidirectional attention: {-1, -1}; a sliding window of w: {w, w};
// causal: {-1, 0}; a causal window: {w, 0}.
struct KeyBand {
  int64_t before = -1;
  int64_t after = -1;

  static KeyBand All() { return {}; }
  static KeyBand Window(int64_t w) { return {w, w}; }
};

// The attention of query rows [row_begin, row_end): softmax(scale * scores)
// V into their context rows, streamed as the header describes, over the
// keys `band` lets each row see; only key blocks some row of a query block
// sees are computed. `scratch` holds AttentionScratchFloats(head_size,
// rotary) floats whatever the length.
void AttentionWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin, int64_t row_end,
                      float scale, KeyBand band, float* scratch);

}  // namespace engine::kernels
