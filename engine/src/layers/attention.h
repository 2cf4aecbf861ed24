// Multi-head self-attention core over a packed batch: for each sequence and
// head, softmax(Q K^T / sqrt(d)) V, reading Q, K and V in place from the
// fused projection (no per-head copies), streamed over key blocks with an
// online softmax so memory does not grow with the sequence length
// (kernels/attention_kernels.h). Sequences never see each other's tokens,
// so no padding mask is needed.
#pragma once

#include "engine/token_rows.h"
#include "kernels/attention_kernels.h"
#include "layers/packed_batch.h"
#include "layers/relative_position.h"
#include "layers/rotary.h"
#include "layers/workspace.h"

namespace engine {

// The heads of one attention layer.
struct AttentionShape {
  int heads = 0;
  // Grouped-query attention: query head h reads K/V head h / (heads /
  // kv_heads). 0: heads.
  int kv_heads = 0;
  int head_size = 0;
  // The scores' scale; 0: 1 / sqrt(head_size).
  float scale = 0;
};

// `qkv` is [tokens, (heads + 2 kv_heads) * head_size] (Q | K | V, heads
// contiguous within each); `context` receives [tokens, heads * head_size]
// with the heads concatenated. A non-empty `position_bias` (MPNet, ALiBi)
// is added to the scores inside the kernel; a non-null `rotary` turns Q and
// K by their positions as the kernel reads them (NomicBert, GTE, ModernBERT,
// Qwen3, Gemma 3). `band` says which keys of its sequence each token sees:
// all, a sliding window (ModernBERT's local layers, w = local_attention /
// 2), causal, or a causal window. `query_rows` other than kAll computes
// only that one row of each sequence's context (the compact last layer
// reads no other); every key is still attended to.
void SelfAttention(const float* qkv, const PackedBatch& packed, const AttentionShape& shape,
                   const RelativePositionBias& position_bias, const RotaryTable* rotary,
                   kernels::KeyBand band, const Workspace& workspace, float* context,
                   TokenRows query_rows = TokenRows::kAll);

}  // namespace engine
