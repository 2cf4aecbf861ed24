#include "layers/attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention_kernels.h"
#include "runtime/profile.h"

namespace engine {
namespace {

// Query rows of a task when one (sequence, head) pair is split: no fewer,
// so the packed K chunk of the scores kernel is reused by enough rows.
constexpr int64_t kMinBlockRows = 16;
// Tasks per thread below which (sequence, head) pairs are split by query rows.
constexpr int64_t kTasksPerThread = 4;

}  // namespace

void SelfAttention(const float* qkv, const PackedBatch& packed, const AttentionShape& shape,
                   const RelativePositionBias& position_bias, const RotaryTable* rotary,
                   kernels::KeyBand band, const Workspace& workspace, float* context,
                   TokenRows query_rows) {
  profile::ScopedOp op(profile::Op::kAttention);
  const int heads = shape.heads;
  const int head_size = shape.head_size;
  const int kv_heads = shape.kv_heads > 0 ? shape.kv_heads : heads;
  const int group = heads / kv_heads;  // query heads per K/V head
  const int64_t q_width = static_cast<int64_t>(heads) * head_size;
  const int64_t kv_width = static_cast<int64_t>(kv_heads) * head_size;
  const int64_t qkv_stride = q_width + 2 * kv_width;
  const float scale =
      shape.scale > 0 ? shape.scale : 1.0f / std::sqrt(static_cast<float>(head_size));
  const kernels::Isa isa = kernels::BestIsa();
  int64_t longest = 0;
  for (int s = 0; s < packed.num_sequences; ++s) {
    longest = std::max<int64_t>(longest, packed.offsets[s + 1] - packed.offsets[s]);
  }
  // Each thread owns one fixed-size scratch of the workspace.
  const int threads = std::max(1, std::min(omp_get_max_threads(), workspace.threads));
  const int64_t pairs = static_cast<int64_t>(packed.num_sequences) * heads;
  // Few (sequence, head) pairs (one sequence, 12 heads, 2+ threads): split
  // each pair's query rows into blocks so the threads stay balanced.
  int64_t blocks = 1;
  if (pairs < kTasksPerThread * threads && query_rows == TokenRows::kAll) {
    blocks = std::min((kTasksPerThread * threads + pairs - 1) / pairs,
                      std::max<int64_t>(1, longest / kMinBlockRows));
  }
  const int64_t block_rows = (longest + blocks - 1) / blocks;
  const int64_t tasks = pairs * blocks;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t block = task % blocks;
    const int64_t pair = task / blocks;
    const int64_t s = pair / heads;
    const int64_t head = pair % heads;
    const int64_t begin = packed.offsets[s];
    const int64_t len = packed.offsets[s + 1] - begin;
    // One kept row (blocks == 1), or this block's rows.
    const int64_t row_begin = query_rows == TokenRows::kAll     ? block * block_rows
                              : query_rows == TokenRows::kFirst ? 0
                                                                : len - 1;
    if (row_begin >= len) continue;
    const int64_t row_end =
        query_rows == TokenRows::kAll ? std::min(len, row_begin + block_rows) : row_begin + 1;
    kernels::AttentionHeadArgs args;
    const float* row = qkv + begin * qkv_stride;
    const int64_t kv_head = head / group;
    args.q = row + head * head_size;
    args.k = row + q_width + kv_head * head_size;
    args.v = row + q_width + kv_width + kv_head * head_size;
    args.qkv_stride = qkv_stride;
    args.length = len;
    if (packed.visible_keys != nullptr) args.visible_keys = packed.visible_keys[s];
    args.head_size = head_size;
    args.context = context + begin * q_width + head * head_size;
    args.context_stride = q_width;
    if (!position_bias.empty()) args.position_bias = position_bias.ForHead(static_cast<int>(head));
    if (rotary != nullptr) {
      args.rotary = {rotary->cos.data(), rotary->sin.data(), rotary->pairs, rotary->interleaved};
    }
    kernels::AttentionWithIsa(isa, args, row_begin, row_end, scale, band,
                              workspace.attention_scratch(omp_get_thread_num()));
  }
}

}  // namespace engine
