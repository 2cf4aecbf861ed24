#include "model/weights.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "buffer.h"

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

// Where one torch.nn.Linear goes: a float Dense (bias fused, or returned in
// `bias` for Add & Norm when set), or with an int8 cache a QuantizedDense
// with the bias always returned for the epilogues.
struct DenseTarget {
  std::unique_ptr<Dense>* fp32 = nullptr;
  std::unique_ptr<QuantizedDense>* int8 = nullptr;
  std::vector<float>* bias = nullptr;  // fp32: null fuses the bias
};

struct Caches {
  MatmulCache* fp32;
  Int8MatmulCache* int8;  // null: float weights
};

absl::Status MakeDense(const Caches& caches, const float* weight, std::vector<float> bias,
                       int64_t in, int64_t out, DenseActivation activation,
                       const DenseTarget& target) {
  if (caches.int8 != nullptr) {
    absl::StatusOr<std::unique_ptr<QuantizedDense>> dense =
        QuantizedDense::Create(caches.int8, weight, in, out, Int8WeightMax());
    if (!dense.ok()) return dense.status();
    *target.int8 = *std::move(dense);
    *target.bias = std::move(bias);
    return absl::OkStatus();
  }
  const float* fused_bias = bias.data();
  if (target.bias != nullptr) {
    *target.bias = std::move(bias);
    fused_bias = nullptr;
  }
  absl::StatusOr<std::unique_ptr<Dense>> dense =
      Dense::Create(caches.fp32, weight, fused_bias, in, out, activation);
  if (!dense.ok()) return dense.status();
  *target.fp32 = *std::move(dense);
  return absl::OkStatus();
}

// A float weight while it is converted: anonymous mmap (Buffer), so its
// pages go back to the system when it is freed instead of lingering in the
// heap, and load's peak resident memory stays near the converted weights.
absl::StatusOr<Buffer> ReadWeight(const Checkpoint& checkpoint, const std::string& name,
                                  int64_t rows, int64_t cols) {
  // Sizes come from config.json: check the tensor before reserving room for it.
  if (absl::Status s = checkpoint.Check(name, {rows, cols}); !s.ok()) return s;
  absl::StatusOr<Buffer> buffer = Buffer::Allocate(static_cast<size_t>(rows * cols));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status s = checkpoint.ReadFloat(name, {rows, cols}, buffer->data()); !s.ok()) return s;
  return buffer;
}

// Loads a torch.nn.Linear ([out, in] weight, [out] bias); the float weight
// is freed when this returns.
absl::Status LoadDense(const Checkpoint& checkpoint, const std::string& prefix, int64_t in,
                       int64_t out, DenseActivation activation, const Caches& caches,
                       const DenseTarget& target) {
  absl::StatusOr<Buffer> weight = ReadWeight(checkpoint, prefix + ".weight", out, in);
  if (!weight.ok()) return weight.status();
  absl::StatusOr<std::vector<float>> bias = checkpoint.ReadFloat(prefix + ".bias", {out});
  if (!bias.ok()) return bias.status();
  return MakeDense(caches, weight->data(), *std::move(bias), in, out, activation, target);
}

// Q, K and V stacked into one [3H, H] weight so one matmul computes all three.
absl::Status LoadQkv(const Checkpoint& checkpoint, const std::string& prefix, int64_t hidden,
                     const Caches& caches, LayerWeights* layer) {
  const size_t block = static_cast<size_t>(hidden * hidden);
  const char* parts[] = {"query", "key", "value"};
  // Sizes come from config.json: check all three before reserving room for them.
  for (const char* part : parts) {
    const std::string name = absl::StrCat(prefix, ".", part);
    if (absl::Status s = checkpoint.Check(name + ".weight", {hidden, hidden}); !s.ok()) return s;
    if (absl::Status s = checkpoint.Check(name + ".bias", {hidden}); !s.ok()) return s;
  }
  absl::StatusOr<Buffer> weight = Buffer::Allocate(3 * block);
  if (!weight.ok()) return weight.status();
  std::vector<float> bias(3 * static_cast<size_t>(hidden));
  for (int p = 0; p < 3; ++p) {
    const std::string name = absl::StrCat(prefix, ".", parts[p]);
    if (absl::Status s =
            checkpoint.ReadFloat(name + ".weight", {hidden, hidden}, weight->data() + p * block);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = checkpoint.ReadFloat(name + ".bias", {hidden}, bias.data() + p * hidden);
        !s.ok()) {
      return s;
    }
  }
  DenseTarget target{&layer->qkv, &layer->qkv_int8, nullptr};
  if (caches.int8 != nullptr) target.bias = &layer->qkv_bias;
  return MakeDense(caches, weight->data(), std::move(bias), hidden, 3 * hidden,
                   DenseActivation::kNone, target);
}

absl::Status LoadLayer(const Checkpoint& checkpoint, const ModelConfig& config, int index,
                       const Caches& caches, LayerWeights* layer) {
  const int64_t h = config.hidden_size;
  const int64_t inter = config.intermediate_size;
  const std::string prefix = absl::StrCat("encoder.layer.", index);
  if (absl::Status s = LoadQkv(checkpoint, prefix + ".attention.self", h, caches, layer); !s.ok()) {
    return s;
  }
  if (absl::Status s = LoadDense(
          checkpoint, prefix + ".attention.output.dense", h, h, DenseActivation::kNone, caches,
          {&layer->attention_out, &layer->attention_out_int8, &layer->attention_out_bias});
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          LoadNorm(checkpoint, prefix + ".attention.output.LayerNorm", h, &layer->attention_norm);
      !s.ok()) {
    return s;
  }
  DenseTarget ffn_in{&layer->ffn_in, &layer->ffn_in_int8, nullptr};
  if (caches.int8 != nullptr) ffn_in.bias = &layer->ffn_in_bias;
  if (absl::Status s = LoadDense(checkpoint, prefix + ".intermediate.dense", h, inter,
                                 ToDenseActivation(config.activation), caches, ffn_in);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          LoadDense(checkpoint, prefix + ".output.dense", inter, h, DenseActivation::kNone, caches,
                    {&layer->ffn_out, &layer->ffn_out_int8, &layer->ffn_out_bias});
      !s.ok()) {
    return s;
  }
  return LoadNorm(checkpoint, prefix + ".output.LayerNorm", h, &layer->ffn_norm);
}

}  // namespace

absl::StatusOr<ModelWeights> LoadWeights(const Checkpoint& checkpoint, const ModelConfig& config,
                                         MatmulCache* cache, Int8MatmulCache* int8_cache) {
  const Caches caches{cache, int8_cache};
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
  // One layer at a time: num_hidden_layers comes from config.json and may lie.
  for (int i = 0; i < config.num_layers; ++i) {
    LayerWeights layer;
    if (absl::Status s = LoadLayer(checkpoint, config, i, caches, &layer); !s.ok()) return s;
    weights.layers.push_back(std::move(layer));
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
