#include "layers/embeddings.h"

#include "kernels/kernels.h"

namespace engine {

void EmbedTokens(const EmbeddingWeights& weights, const ModelConfig& config,
                 absl::Span<const Sequence> batch, const PackedBatch& packed, float* out) {
  const int64_t h = config.hidden_size;
#pragma omp parallel for schedule(dynamic, 1)
  for (int s = 0; s < packed.num_sequences; ++s) {
    const Sequence& seq = batch[s];
    for (int64_t p = 0; p < static_cast<int64_t>(seq.ids.size()); ++p) {
      const int type = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[p];
      const float* word = weights.word.data() + static_cast<int64_t>(seq.ids[p]) * h;
      const float* position = weights.position.data() + p * h;
      const float* token_type = weights.token_type.data() + static_cast<int64_t>(type) * h;
      float* row = out + (packed.offsets[s] + p) * h;
      for (int64_t c = 0; c < h; ++c) row[c] = word[c] + position[c] + token_type[c];
    }
  }
  kernels::AddLayerNormArgs args;
  args.residual = out;
  args.gamma = weights.norm.gamma.data();
  args.beta = weights.norm.beta.data();
  args.eps = config.layer_norm_eps;
  args.rows = packed.tokens;
  args.hidden = h;
  args.out = out;
  kernels::AddLayerNorm(args);
}

}  // namespace engine
