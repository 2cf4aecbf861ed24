// The attention core of one head of one sequence, on a block of query rows:
//   scores = Q K^T, P = softmax(scale * scores) (ScaledSoftmax of kernels.h),
//   context = P V.
// Q, K and V are read in place with a row stride (the fused [tokens, 3H]
// projection: no per-head copies) and the context rows are written in place
// (the [tokens, H] buffer, heads concatenated). Kernels take raw pointers
// and sizes, allocate nothing and run on the calling thread; the caller
// parallelizes over (sequence, head, query block).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace engine::kernels {

struct AttentionHeadArgs {
  const float* q = nullptr;  // row 0 of the sequence, this head's columns
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t qkv_stride = 0;  // floats from one token's row to the next in q, k, v
  int64_t length = 0;      // tokens of the sequence (query rows and keys)
  int64_t head_size = 0;
  float* context = nullptr;  // row 0 of the sequence's output, this head's columns
  int64_t context_stride = 0;
  // Optional additive bias by relative distance (MPNet): query row i and
  // key j get position_bias[j - i] added to q[i] . k[j], so it must be
  // valid for offsets -(length - 1) .. length - 1. Null: none.
  const float* position_bias = nullptr;
};

// scores[r - row_begin][j] = q[r] . k[j] (+ position_bias[j - r]) for r in
// [row_begin, row_end) and j in [0, length): a row-major
// [row_end - row_begin, length] block.
void AttentionScoresWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                            int64_t row_end, float* scores);

// context[r] = sum_j probs[r - row_begin][j] * v[j] for r in [row_begin, row_end);
// `probs` has the layout of AttentionScoresWithIsa's `scores`.
void AttentionContextWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                             int64_t row_end, const float* probs);

// The three steps on rows [row_begin, row_end): scores, in-place
// ScaledSoftmax with `scale`, context. `scores` needs
// (row_end - row_begin) * length floats.
void AttentionRowsWithIsa(Isa isa, const AttentionHeadArgs& args, int64_t row_begin,
                          int64_t row_end, float scale, float* scores);

}  // namespace engine::kernels
