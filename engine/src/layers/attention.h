// Multi-head self-attention core over a packed batch: for each sequence and
// head, softmax(Q K^T / sqrt(d)) V, reading Q, K and V in place from the
// fused projection (no per-head copies), streamed over key blocks with an
// online softmax so memory does not grow with the sequence length
// (kernels/attention_kernels.h). Sequences never see each other's tokens,
// so no padding mask is needed.
#pragma once

#include "layers/packed_batch.h"
#include "layers/relative_position.h"
#include "layers/rotary.h"
#include "workspace.h"

namespace engine {

// `qkv` is [tokens, 3H] (Q | K | V, heads contiguous within each);
// `context` receives [tokens, H] with the heads concatenated. A non-empty
// `position_bias` (MPNet, ALiBi) is added to the scores inside the kernel;
// a non-null `rotary` turns Q and K by their positions as the kernel reads
// them (NomicBert, GTE, ModernBERT).
// `window` 0: every token sees its whole sequence; w > 0: token i sees
// token j of its sequence iff |i - j| <= w (sliding-window attention:
// ModernBERT's local layers, w = local_attention / 2).
void SelfAttention(const float* qkv, const PackedBatch& packed, int heads, int head_size,
                   const RelativePositionBias& position_bias, const RotaryTable* rotary, int window,
                   const Workspace& workspace, float* context);

}  // namespace engine
