#include "layers/embeddings.h"

#include "kernels/kernels.h"

namespace engine {

namespace {

// The position ids of one sequence's tokens, in order.
class PositionCounter {
 public:
  explicit PositionCounter(const ModelConfig& config)
      : after_padding_(config.position_ids == PositionIds::kAfterPadding),
        pad_(config.pad_token_id) {}

  int32_t Next(int32_t id) {
    if (!after_padding_) return counted_++;
    // transformers' create_position_ids_from_input_ids:
    // cumsum(id != pad) * (id != pad) + pad.
    return id == pad_ ? pad_ : pad_ + ++counted_;
  }

 private:
  bool after_padding_;
  int32_t pad_;
  int32_t counted_ = 0;
};

}  // namespace

absl::Status EmbedTokens(const EmbeddingWeights& weights, const ModelConfig& config,
                         absl::Span<const Sequence> batch, const PackedBatch& packed,
                         float* scratch, float* out) {
  const int64_t e = config.embedding_width();
  float* embedded = weights.project ? scratch : out;
  const bool token_types = !weights.token_type.empty();
  // Rotary and ALiBi models add no position vector here.
  const bool learned_positions = !weights.position.empty();
  // Gemma scales the word embeddings by sqrt(hidden_size).
  const float word_scale = config.embedding_scale > 0 ? config.embedding_scale : 1.0f;
#pragma omp parallel for schedule(dynamic, 1)
  for (int s = 0; s < packed.num_sequences; ++s) {
    const Sequence& seq = batch[s];
    PositionCounter positions(config);
    for (int64_t p = 0; p < static_cast<int64_t>(seq.ids.size()); ++p) {
      const int32_t position = positions.Next(seq.ids[p]);
      const float* word = weights.word.data() + static_cast<int64_t>(seq.ids[p]) * e;
      float* row = embedded + (packed.offsets[s] + p) * e;
      for (int64_t c = 0; c < e; ++c) row[c] = word[c] * word_scale;
      if (learned_positions) {
        const float* pos = weights.position.data() + static_cast<int64_t>(position) * e;
        for (int64_t c = 0; c < e; ++c) row[c] += pos[c];
      }
      if (token_types) {
        const int type = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[p];
        const float* token_type = weights.token_type.data() + static_cast<int64_t>(type) * e;
        for (int64_t c = 0; c < e; ++c) row[c] += token_type[c];
      }
    }
  }
  // Decoder families have no norm here: their first layer normalizes.
  if (!weights.norm.identity()) {
    kernels::AddLayerNormArgs args;
    args.residual = embedded;
    args.gamma = weights.norm.gamma.data();
    args.beta = weights.norm.beta.data();
    args.eps = config.layer_norm_eps;
    args.rms = config.rms_norm;
    args.rows = packed.tokens;
    args.hidden = e;
    args.out = embedded;
    kernels::AddLayerNorm(args);
  }
  if (weights.project) return weights.project->Forward(embedded, packed.tokens, out);
  return absl::OkStatus();
}

}  // namespace engine
