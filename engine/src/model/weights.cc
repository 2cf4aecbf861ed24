#include "model/weights.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace engine {
namespace {

absl::Status LoadNorm(const Checkpoint& checkpoint, const std::string& prefix, int64_t hidden,
                      LayerNormWeights* norm) {
  absl::StatusOr<std::vector<float>> gamma = checkpoint.ReadFloat(prefix + ".weight", {hidden});
  if (!gamma.ok()) return gamma.status();
  absl::StatusOr<std::vector<float>> beta = checkpoint.ReadFloat(prefix + ".bias", {hidden});
  if (!beta.ok()) return beta.status();
  norm->gamma = *std::move(gamma);
  norm->beta = *std::move(beta);
  return absl::OkStatus();
}

// Loads a torch.nn.Linear ([out, in] weight, [out] bias) as a Dense layer.
// With `bias_out` the bias is returned for Add & Norm instead of fused.
absl::StatusOr<std::unique_ptr<Dense>> LoadDense(const Checkpoint& checkpoint,
                                                 const std::string& prefix, int64_t in, int64_t out,
                                                 DenseActivation activation, MatmulCache* cache,
                                                 std::vector<float>* bias_out = nullptr) {
  absl::StatusOr<std::vector<float>> weight = checkpoint.ReadFloat(prefix + ".weight", {out, in});
  if (!weight.ok()) return weight.status();
  absl::StatusOr<std::vector<float>> bias = checkpoint.ReadFloat(prefix + ".bias", {out});
  if (!bias.ok()) return bias.status();
  const float* fused_bias = bias->data();
  if (bias_out != nullptr) {
    *bias_out = *std::move(bias);
    fused_bias = nullptr;
  }
  return Dense::Create(cache, weight->data(), fused_bias, in, out, activation);
}

// Q, K and V stacked into one [3H, H] weight so one matmul computes all three.
absl::StatusOr<std::unique_ptr<Dense>> LoadQkv(const Checkpoint& checkpoint,
                                               const std::string& prefix, int64_t hidden,
                                               MatmulCache* cache) {
  const size_t block = static_cast<size_t>(hidden * hidden);
  std::vector<float> weight(3 * block);
  std::vector<float> bias(3 * static_cast<size_t>(hidden));
  const char* parts[] = {"query", "key", "value"};
  for (int p = 0; p < 3; ++p) {
    const std::string name = absl::StrCat(prefix, ".", parts[p]);
    if (absl::Status s =
            checkpoint.ReadFloat(name + ".weight", {hidden, hidden}, weight.data() + p * block);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = checkpoint.ReadFloat(name + ".bias", {hidden}, bias.data() + p * hidden);
        !s.ok()) {
      return s;
    }
  }
  return Dense::Create(cache, weight.data(), bias.data(), hidden, 3 * hidden,
                       DenseActivation::kNone);
}

absl::Status LoadLayer(const Checkpoint& checkpoint, const ModelConfig& config, int index,
                       MatmulCache* cache, LayerWeights* layer) {
  const int64_t h = config.hidden_size;
  const int64_t inter = config.intermediate_size;
  const std::string prefix = absl::StrCat("encoder.layer.", index);
  absl::StatusOr<std::unique_ptr<Dense>> dense =
      LoadQkv(checkpoint, prefix + ".attention.self", h, cache);
  if (!dense.ok()) return dense.status();
  layer->qkv = *std::move(dense);

  dense = LoadDense(checkpoint, prefix + ".attention.output.dense", h, h, DenseActivation::kNone,
                    cache, &layer->attention_out_bias);
  if (!dense.ok()) return dense.status();
  layer->attention_out = *std::move(dense);
  if (absl::Status s =
          LoadNorm(checkpoint, prefix + ".attention.output.LayerNorm", h, &layer->attention_norm);
      !s.ok()) {
    return s;
  }

  dense = LoadDense(checkpoint, prefix + ".intermediate.dense", h, inter,
                    ToDenseActivation(config.activation), cache);
  if (!dense.ok()) return dense.status();
  layer->ffn_in = *std::move(dense);

  dense = LoadDense(checkpoint, prefix + ".output.dense", inter, h, DenseActivation::kNone, cache,
                    &layer->ffn_out_bias);
  if (!dense.ok()) return dense.status();
  layer->ffn_out = *std::move(dense);
  return LoadNorm(checkpoint, prefix + ".output.LayerNorm", h, &layer->ffn_norm);
}

}  // namespace

absl::StatusOr<ModelWeights> LoadWeights(const Checkpoint& checkpoint, const ModelConfig& config,
                                         MatmulCache* cache) {
  ModelWeights weights;
  const int64_t h = config.hidden_size;
  EmbeddingWeights& emb = weights.embeddings;
  for (auto [name, rows, target] :
       {std::tuple<const char*, int64_t, std::vector<float>*>{"embeddings.word_embeddings.weight",
                                                              config.vocab_size, &emb.word},
        {"embeddings.position_embeddings.weight", config.max_position_embeddings, &emb.position},
        {"embeddings.token_type_embeddings.weight", config.type_vocab_size, &emb.token_type}}) {
    absl::StatusOr<std::vector<float>> table = checkpoint.ReadFloat(name, {rows, h});
    if (!table.ok()) return table.status();
    *target = *std::move(table);
  }
  if (absl::Status s = LoadNorm(checkpoint, "embeddings.LayerNorm", h, &emb.norm); !s.ok()) {
    return s;
  }
  weights.layers.resize(static_cast<size_t>(config.num_layers));
  for (int i = 0; i < config.num_layers; ++i) {
    if (absl::Status s = LoadLayer(checkpoint, config, i, cache, &weights.layers[i]); !s.ok()) {
      return s;
    }
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPre) {
    if (absl::Status s = LoadNorm(checkpoint, "encoder.LayerNorm", h, &weights.final_norm);
        !s.ok()) {
      return s;
    }
  }
  if (checkpoint.Has("pooler.dense.weight")) {
    auto pooler = std::make_unique<PoolerWeights>();
    absl::StatusOr<std::vector<float>> w = checkpoint.ReadFloat("pooler.dense.weight", {h, h});
    if (!w.ok()) return w.status();
    absl::StatusOr<std::vector<float>> b = checkpoint.ReadFloat("pooler.dense.bias", {h});
    if (!b.ok()) return b.status();
    pooler->weight = *std::move(w);
    pooler->bias = *std::move(b);
    weights.pooler = std::move(pooler);
  }
  return weights;
}

}  // namespace engine
