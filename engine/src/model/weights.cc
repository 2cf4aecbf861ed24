#include "model/weights.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "buffer.h"

namespace engine {
namespace {

absl::Status LoadNorm(const Checkpoint& checkpoint, const std::string& prefix, int64_t width,
                      LayerNormWeights* norm) {
  absl::StatusOr<std::vector<float>> gamma = checkpoint.ReadFloat(prefix + ".weight", {width});
  if (!gamma.ok()) return gamma.status();
  absl::StatusOr<std::vector<float>> beta = checkpoint.ReadFloat(prefix + ".bias", {width});
  if (!beta.ok()) return beta.status();
  norm->gamma = *std::move(gamma);
  norm->beta = *std::move(beta);
  return absl::OkStatus();
}

struct Caches {
  MatmulCache* fp32;
  Int8MatmulCache* int8;  // null: float or bf16 weights
  bool bf16 = false;      // bf16 weights and inputs (fp32 matmul cache)
};

// Where a Linear's bias goes in float: fused into the matmul, or kept for
// the kernel that consumes the output (Add & Norm). int8 always keeps it.
enum class Bias { kFused, kKept };

// In bf16, the output's type: float for attention and Add & Norm, bf16 when
// the next matmul reads it directly (the FFN's inner activations).
enum class Bf16Output { kFloat, kBf16 };

// `weight` holds floats, or bf16 bits when caches.bf16 (ReadStacked).
absl::Status MakeLinear(const Caches& caches, const void* weight, std::vector<float> bias,
                        int64_t in, int64_t out, DenseActivation activation, Bias placement,
                        Bf16Output bf16_output, Linear* linear) {
  if (caches.int8 != nullptr) {
    absl::StatusOr<std::unique_ptr<QuantizedDense>> dense = QuantizedDense::Create(
        caches.int8, static_cast<const float*>(weight), in, out, Int8WeightMax());
    if (!dense.ok()) return dense.status();
    linear->int8 = *std::move(dense);
    linear->bias = std::move(bias);
    return absl::OkStatus();
  }
  const float* fused_bias = placement == Bias::kFused ? bias.data() : nullptr;
  absl::StatusOr<std::unique_ptr<Dense>> dense =
      caches.bf16
          ? Dense::CreateBf16(
                caches.fp32, static_cast<const uint16_t*>(weight), fused_bias, in, out, activation,
                bf16_output == Bf16Output::kBf16 ? DenseTypes::kBf16ToBf16 : DenseTypes::kBf16ToF32)
          : Dense::Create(caches.fp32, static_cast<const float*>(weight), fused_bias, in, out,
                          activation);
  if (!dense.ok()) return dense.status();
  linear->fp32 = *std::move(dense);
  if (placement == Bias::kKept) linear->bias = std::move(bias);
  return absl::OkStatus();
}

// The [rows, cols] tensors `names` stacked into one weight while it is
// converted: float32, or bf16 bits when `bf16` (a BF16 checkpoint's values
// copied as stored, without a float32 copy). Anonymous mmap (Buffer), so
// its pages go back to the system when it is freed instead of lingering in
// the heap, and load's peak resident memory stays near the converted weights.
absl::StatusOr<Buffer> ReadStacked(const Checkpoint& checkpoint,
                                   const std::vector<std::string>& names, int64_t rows,
                                   int64_t cols, bool bf16) {
  // Sizes come from config.json: check every tensor before reserving room.
  for (const std::string& name : names) {
    if (absl::Status s = checkpoint.Check(name, {rows, cols}); !s.ok()) return s;
  }
  const int64_t block = rows * cols;
  const int64_t elements = block * static_cast<int64_t>(names.size());
  absl::StatusOr<Buffer> buffer =
      Buffer::Allocate(static_cast<size_t>(bf16 ? (elements + 1) / 2 : elements));
  if (!buffer.ok()) return buffer.status();
  for (size_t p = 0; p < names.size(); ++p) {
    const absl::Status s =
        bf16 ? checkpoint.ReadBf16(names[p], {rows, cols},
                                   reinterpret_cast<uint16_t*>(buffer->data()) + p * block)
             : checkpoint.ReadFloat(names[p], {rows, cols}, buffer->data() + p * block);
    if (!s.ok()) return s;
  }
  return buffer;
}

// Loads a torch.nn.Linear ([out, in] weight, [out] bias); the converted
// weight is freed when this returns.
absl::Status LoadLinear(const Checkpoint& checkpoint, const std::string& prefix, int64_t in,
                        int64_t out, DenseActivation activation, Bias placement,
                        const Caches& caches, Linear* linear,
                        Bf16Output bf16_output = Bf16Output::kFloat) {
  absl::StatusOr<Buffer> weight =
      ReadStacked(checkpoint, {prefix + ".weight"}, out, in, caches.bf16);
  if (!weight.ok()) return weight.status();
  absl::StatusOr<std::vector<float>> bias = checkpoint.ReadFloat(prefix + ".bias", {out});
  if (!bias.ok()) return bias.status();
  return MakeLinear(caches, weight->data(), *std::move(bias), in, out, activation, placement,
                    bf16_output, linear);
}

// Q, K and V stacked into one [3H, H] weight so one matmul computes all three.
absl::Status LoadQkv(const Checkpoint& checkpoint, const std::string (&names)[3], int64_t hidden,
                     const Caches& caches, Linear* qkv) {
  // Sizes come from config.json: check all three before reserving room for them.
  for (const std::string& name : names) {
    if (absl::Status s = checkpoint.Check(name + ".weight", {hidden, hidden}); !s.ok()) return s;
    if (absl::Status s = checkpoint.Check(name + ".bias", {hidden}); !s.ok()) return s;
  }
  absl::StatusOr<Buffer> weight =
      ReadStacked(checkpoint, {names[0] + ".weight", names[1] + ".weight", names[2] + ".weight"},
                  hidden, hidden, caches.bf16);
  if (!weight.ok()) return weight.status();
  std::vector<float> bias(3 * static_cast<size_t>(hidden));
  for (int p = 0; p < 3; ++p) {
    if (absl::Status s =
            checkpoint.ReadFloat(names[p] + ".bias", {hidden}, bias.data() + p * hidden);
        !s.ok()) {
      return s;
    }
  }
  return MakeLinear(caches, weight->data(), std::move(bias), hidden, 3 * hidden,
                    DenseActivation::kNone, Bias::kFused, Bf16Output::kFloat, qkv);
}

absl::Status LoadLayer(const Checkpoint& checkpoint, const Architecture& architecture,
                       const ModelConfig& config, int index, const Caches& caches,
                       LayerWeights* layer) {
  const int64_t h = config.hidden_size;
  const int64_t inter = config.intermediate_size;
  const std::string prefix = absl::StrCat(architecture.names.layer_prefix, index, ".");
  const LayerTensorNames& n = architecture.names.layer;
  const Recipe& recipe = architecture.recipe;
  switch (recipe.qkv) {
    case QkvLayout::kSeparate: {
      const std::string qkv[3] = {prefix + n.query, prefix + n.key, prefix + n.value};
      if (absl::Status s = LoadQkv(checkpoint, qkv, h, caches, &layer->qkv); !s.ok()) return s;
      break;
    }
  }
  if (absl::Status s =
          LoadLinear(checkpoint, prefix + n.attention_out, h, h, DenseActivation::kNone,
                     Bias::kKept, caches, &layer->attention_out);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = LoadNorm(checkpoint, prefix + n.attention_norm, h, &layer->attention_norm);
      !s.ok()) {
    return s;
  }
  switch (recipe.feed_forward) {
    case FeedForward::kDense:
      if (absl::Status s = LoadLinear(checkpoint, prefix + n.ffn_in, h, inter,
                                      ToDenseActivation(config.activation), Bias::kFused, caches,
                                      &layer->ffn_in, Bf16Output::kBf16);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = LoadLinear(checkpoint, prefix + n.ffn_out, inter, h,
                                      DenseActivation::kNone, Bias::kKept, caches, &layer->ffn_out);
          !s.ok()) {
        return s;
      }
      break;
  }
  return LoadNorm(checkpoint, prefix + n.ffn_norm, h, &layer->ffn_norm);
}

absl::Status LoadEmbeddings(const Checkpoint& checkpoint, const Architecture& architecture,
                            const ModelConfig& config, MatmulCache* cache, EmbeddingWeights* emb) {
  const TensorNames& names = architecture.names;
  const int64_t e = config.embedding_width();
  struct Table {
    const std::string& name;
    int64_t rows;
    std::vector<float>* target;
  };
  std::vector<Table> tables = {{names.word_embeddings, config.vocab_size, &emb->word}};
  switch (architecture.recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
      tables.push_back({names.position_embeddings, config.max_position_embeddings, &emb->position});
      break;
  }
  if (config.type_vocab_size > 0) {
    tables.push_back({names.token_type_embeddings, config.type_vocab_size, &emb->token_type});
  }
  for (const Table& table : tables) {
    absl::StatusOr<std::vector<float>> values =
        checkpoint.ReadFloat(table.name + ".weight", {table.rows, e});
    if (!values.ok()) return values.status();
    *table.target = *std::move(values);
  }
  if (absl::Status s = LoadNorm(checkpoint, names.embeddings_norm, e, &emb->norm); !s.ok()) {
    return s;
  }
  if (!config.has_embedding_projection()) return absl::OkStatus();
  // Float whatever the precision: one small matmul per batch.
  Linear project;
  if (absl::Status s =
          LoadLinear(checkpoint, names.embeddings_project, e, config.hidden_size,
                     DenseActivation::kNone, Bias::kFused, Caches{cache, nullptr, false}, &project);
      !s.ok()) {
    return s;
  }
  emb->project = std::move(project.fp32);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelWeights> LoadWeights(const Checkpoint& checkpoint,
                                         const Architecture& architecture,
                                         const ModelConfig& config, Precision precision,
                                         MatmulCache* cache, Int8MatmulCache* int8_cache) {
  const Caches caches{cache, precision == Precision::kInt8 ? int8_cache : nullptr,
                      precision == Precision::kBf16};
  if (precision == Precision::kInt8 && int8_cache == nullptr) {
    return absl::InvalidArgumentError("int8 weights need an Int8MatmulCache");
  }
  const TensorNames& names = architecture.names;
  ModelWeights weights;
  const int64_t h = config.hidden_size;
  if (absl::Status s = LoadEmbeddings(checkpoint, architecture, config, cache, &weights.embeddings);
      !s.ok()) {
    return s;
  }
  // One layer at a time: num_hidden_layers comes from config.json and may lie.
  for (int i = 0; i < config.num_layers; ++i) {
    LayerWeights layer;
    if (absl::Status s = LoadLayer(checkpoint, architecture, config, i, caches, &layer); !s.ok()) {
      return s;
    }
    weights.layers.push_back(std::move(layer));
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPre) {
    if (absl::Status s = LoadNorm(checkpoint, names.final_norm, h, &weights.final_norm); !s.ok()) {
      return s;
    }
  }
  switch (architecture.recipe.attention_bias) {
    case AttentionBias::kNone:
      break;
    case AttentionBias::kRelativeBuckets: {
      absl::StatusOr<std::vector<float>> table =
          checkpoint.ReadFloat(names.relative_attention_bias + ".weight",
                               {config.relative_attention_buckets, config.num_heads});
      if (!table.ok()) return table.status();
      weights.relative_position =
          MakeRelativePositionBias(*table, config.relative_attention_buckets, config.num_heads,
                                   config.max_length(), config.relative_attention_max_distance,
                                   1.0f / std::sqrt(static_cast<float>(config.head_size())));
      break;
    }
  }
  if (!names.pooler.empty() && checkpoint.Has(names.pooler + ".weight")) {
    auto pooler = std::make_unique<PoolerWeights>();
    absl::StatusOr<std::vector<float>> w = checkpoint.ReadFloat(names.pooler + ".weight", {h, h});
    if (!w.ok()) return w.status();
    absl::StatusOr<std::vector<float>> b = checkpoint.ReadFloat(names.pooler + ".bias", {h});
    if (!b.ok()) return b.status();
    pooler->weight = *std::move(w);
    pooler->bias = *std::move(b);
    weights.pooler = std::move(pooler);
  }
  return weights;
}

}  // namespace engine
