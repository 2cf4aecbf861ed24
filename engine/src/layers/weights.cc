#include "layers/weights.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "layers/alibi.h"
#include "runtime/buffer.h"

namespace engine {
namespace {

// A [width] bias, or zeros when the model has none.
absl::StatusOr<std::vector<float>> ReadBias(const Checkpoint& checkpoint, const std::string& name,
                                            int64_t width, bool present) {
  if (!present) return std::vector<float>(static_cast<size_t>(width), 0.0f);
  return checkpoint.ReadFloat(name, {width});
}

// What a norm's stored weight is to its gamma: Gemma scales by (1 + w).
float GammaOffset(const Architecture& architecture) {
  return architecture.recipe.norm == NormKind::kRmsUnitOffset ? 1.0f : 0.0f;
}

// A [width] norm weight as the gamma the kernels multiply by.
absl::StatusOr<std::vector<float>> ReadGamma(const Checkpoint& checkpoint, const std::string& name,
                                             int64_t width, float offset) {
  absl::StatusOr<std::vector<float>> gamma = checkpoint.ReadFloat(name, {width});
  if (!gamma.ok() || offset == 0) return gamma;
  for (float& g : *gamma) g += offset;
  return gamma;
}

absl::Status LoadNorm(const Checkpoint& checkpoint, const std::string& prefix, int64_t width,
                      bool bias, float gamma_offset, LayerNormWeights* norm) {
  absl::StatusOr<std::vector<float>> gamma =
      ReadGamma(checkpoint, prefix + ".weight", width, gamma_offset);
  if (!gamma.ok()) return gamma.status();
  absl::StatusOr<std::vector<float>> beta = ReadBias(checkpoint, prefix + ".bias", width, bias);
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
                                   const std::vector<std::string>& names,
                                   const std::vector<int64_t>& rows, int64_t cols, bool bf16) {
  // Sizes come from config.json: check every tensor before reserving room.
  int64_t elements = 0;
  for (size_t p = 0; p < names.size(); ++p) {
    RETURN_IF_ERROR(checkpoint.Check(names[p], {rows[p], cols}));
    elements += rows[p] * cols;
  }
  absl::StatusOr<Buffer> buffer =
      Buffer::Allocate(static_cast<size_t>(bf16 ? (elements + 1) / 2 : elements));
  if (!buffer.ok()) return buffer.status();
  int64_t at = 0;
  for (size_t p = 0; p < names.size(); ++p) {
    const absl::Status s =
        bf16 ? checkpoint.ReadBf16(names[p], {rows[p], cols},
                                   reinterpret_cast<uint16_t*>(buffer->data()) + at)
             : checkpoint.ReadFloat(names[p], {rows[p], cols}, buffer->data() + at);
    if (!s.ok()) return s;
    at += rows[p] * cols;
  }
  return buffer;
}

// How one matmul's weight is stored: the [rows[p], in] tensors `modules`
// (".weight" / ".bias" appended) stacked in order, biases optional.
struct StackedLinear {
  std::vector<std::string> modules;
  std::vector<int64_t> rows;  // of each module (Q, K and V differ with grouped-query heads)
  int64_t in = 0;
  bool bias = true;
  // Swap the two halves of a single [2 * half, in] module (a fused gated
  // FFN whose activated half comes second), so the activated half is first.
  bool swap_halves = false;
};

// Exchanges rows [0, half) and [half, 2 half) of a [2 half, width] matrix
// of `element` bytes each.
void SwapHalves(void* data, int64_t half, int64_t width, size_t element) {
  const size_t bytes = static_cast<size_t>(half * width) * element;
  std::vector<unsigned char> first(bytes);
  auto* base = static_cast<unsigned char*>(data);
  std::memcpy(first.data(), base, bytes);
  std::memcpy(base, base + bytes, bytes);
  std::memcpy(base + bytes, first.data(), bytes);
}

// A stacked matmul's values as read: the [out, in] weight (floats, or bf16
// bits) and the [out] bias (zeros where the checkpoint has none).
struct StackedValues {
  Buffer weight;
  std::vector<float> bias;
  int64_t out = 0;
};

absl::StatusOr<StackedValues> ReadStackedLinear(const Checkpoint& checkpoint,
                                                const StackedLinear& stacked, bool bf16) {
  const std::vector<int64_t>& rows = stacked.rows;
  // Sizes come from config.json: check every tensor before reserving room.
  std::vector<std::string> weights;
  int64_t out = 0;
  for (size_t p = 0; p < stacked.modules.size(); ++p) {
    weights.push_back(stacked.modules[p] + ".weight");
    RETURN_IF_ERROR(checkpoint.Check(weights.back(), {rows[p], stacked.in}));
    if (stacked.bias) {
      RETURN_IF_ERROR(checkpoint.Check(stacked.modules[p] + ".bias", {rows[p]}));
    }
    out += rows[p];
  }
  absl::StatusOr<Buffer> weight = ReadStacked(checkpoint, weights, rows, stacked.in, bf16);
  if (!weight.ok()) return weight.status();
  std::vector<float> bias(static_cast<size_t>(out), 0.0f);
  if (stacked.bias) {
    int64_t at = 0;
    for (size_t p = 0; p < stacked.modules.size(); ++p) {
      if (absl::Status s =
              checkpoint.ReadFloat(stacked.modules[p] + ".bias", {rows[p]}, bias.data() + at);
          !s.ok()) {
        return s;
      }
      at += rows[p];
    }
  }
  if (stacked.swap_halves) {
    SwapHalves(weight->data(), out / 2, stacked.in, bf16 ? sizeof(uint16_t) : sizeof(float));
    SwapHalves(bias.data(), out / 2, 1, sizeof(float));
  }
  return StackedValues{*std::move(weight), std::move(bias), out};
}

// Loads one matmul from its stacked modules; the converted weight is freed
// when this returns.
absl::Status LoadStackedLinear(const Checkpoint& checkpoint, const StackedLinear& stacked,
                               DenseActivation activation, Bias placement, const Caches& caches,
                               Linear* linear, Bf16Output bf16_output = Bf16Output::kFloat) {
  absl::StatusOr<StackedValues> values = ReadStackedLinear(checkpoint, stacked, caches.bf16);
  if (!values.ok()) return values.status();
  return MakeLinear(caches, values->weight.data(), std::move(values->bias), stacked.in, values->out,
                    activation, placement, bf16_output, linear);
}

// The last layer's float Q and K|V matmuls (KeptRowQkv) from the fused
// Q|K|V weight [q_width + 2 kv_width, in]: its first q_width rows, then the
// rest.
absl::Status MakeKeptRowQkv(const Caches& caches, const StackedValues& qkv, int64_t in,
                            int64_t q_width, KeptRowQkv* kept) {
  const float* weight = qkv.weight.data();
  absl::StatusOr<std::unique_ptr<Dense>> query =
      Dense::Create(caches.fp32, weight, qkv.bias.data(), in, q_width, DenseActivation::kNone);
  if (!query.ok()) return query.status();
  absl::StatusOr<std::unique_ptr<Dense>> key_value =
      Dense::Create(caches.fp32, weight + q_width * in, qkv.bias.data() + q_width, in,
                    qkv.out - q_width, DenseActivation::kNone);
  if (!key_value.ok()) return key_value.status();
  kept->query = *std::move(query);
  kept->key_value = *std::move(key_value);
  return absl::OkStatus();
}

// Loads a torch.nn.Linear ([out, in] weight, [out] bias when `bias`).
absl::Status LoadLinear(const Checkpoint& checkpoint, const std::string& prefix, int64_t in,
                        int64_t out, bool bias, DenseActivation activation, Bias placement,
                        const Caches& caches, Linear* linear,
                        Bf16Output bf16_output = Bf16Output::kFloat) {
  return LoadStackedLinear(checkpoint, {{prefix}, {out}, in, bias}, activation, placement, caches,
                           linear, bf16_output);
}

absl::Status LoadLayer(const Checkpoint& checkpoint, const Architecture& architecture,
                       const ModelConfig& config, int index, const Caches& caches,
                       LayerWeights* layer) {
  const int64_t h = config.hidden_size;
  const int64_t inter = config.intermediate_size;
  const std::string prefix = absl::StrCat(architecture.names.layer_prefix, index, ".");
  const LayerTensorNames& n = architecture.names.layer;
  const Recipe& recipe = architecture.recipe;
  const Biases& biases = config.biases;
  const float gamma_offset = GammaOffset(architecture);
  const int64_t q_width = config.query_width();
  const int64_t kv_width = config.kv_width();
  // Q, K and V in one [q + 2 kv, H] matmul, stacked at load where the
  // checkpoint keeps them apart.
  StackedLinear qkv;
  switch (recipe.qkv) {
    case QkvLayout::kSeparate:
      qkv = {{prefix + n.query, prefix + n.key, prefix + n.value},
             {q_width, kv_width, kv_width},
             h,
             biases.attention};
      break;
    case QkvLayout::kFused:
      qkv = {{prefix + n.qkv}, {config.qkv_width()}, h, biases.attention};
      break;
  }
  {
    absl::StatusOr<StackedValues> values = ReadStackedLinear(checkpoint, qkv, caches.bf16);
    if (!values.ok()) return values.status();
    if (index + 1 == config.num_layers && caches.int8 == nullptr && !caches.bf16) {
      RETURN_IF_ERROR(MakeKeptRowQkv(caches, *values, h, q_width, &layer->kept_qkv));
    }
    if (absl::Status s =
            MakeLinear(caches, values->weight.data(), std::move(values->bias), h, values->out,
                       DenseActivation::kNone, Bias::kFused, Bf16Output::kFloat, &layer->qkv);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          LoadLinear(checkpoint, prefix + n.attention_out, q_width, h, biases.attention,
                     DenseActivation::kNone, Bias::kKept, caches, &layer->attention_out);
      !s.ok()) {
    return s;
  }
  if (recipe.qk_norm) {
    const int64_t d = config.head_size();
    for (auto [name, gamma] :
         {std::pair<const std::string&, std::vector<float>*>{n.q_norm, &layer->q_norm},
          {n.k_norm, &layer->k_norm}}) {
      absl::StatusOr<std::vector<float>> values =
          ReadGamma(checkpoint, prefix + name + ".weight", d, gamma_offset);
      if (!values.ok()) return values.status();
      *gamma = *std::move(values);
    }
  }
  if (recipe.sublayer_output_norms) {
    for (auto [name, norm] : {std::pair<const std::string&, LayerNormWeights*>{
                                  n.attention_out_norm, &layer->attention_out_norm},
                              {n.ffn_out_norm, &layer->ffn_out_norm}}) {
      RETURN_IF_ERROR(LoadNorm(checkpoint, prefix + name, h, biases.norm, gamma_offset, norm));
    }
  }
  const bool attention_norm = config.layer_norm_placement == LayerNormPlacement::kPost ||
                              index > 0 || config.first_attention_norm;
  if (attention_norm) {
    RETURN_IF_ERROR(LoadNorm(checkpoint, prefix + n.attention_norm, h, biases.norm, gamma_offset,
                             &layer->attention_norm));
  }
  // Gated: the activated half first, applied after the matmul (the
  // Bf16Output of its float output is kFloat: the gate reads it).
  StackedLinear ffn_in;
  switch (recipe.feed_forward) {
    case FeedForward::kDense:
      ffn_in = {{prefix + n.ffn_in}, {inter}, h, biases.ffn_in};
      break;
    case FeedForward::kGatedFused:
      ffn_in = {{prefix + n.ffn_in}, {2 * inter}, h, biases.ffn_in};
      ffn_in.swap_halves = recipe.gate_half == GateHalf::kSecond;
      break;
    case FeedForward::kGatedSplit:
      ffn_in = {{prefix + n.ffn_gate, prefix + n.ffn_in}, {inter, inter}, h, biases.ffn_in};
      break;
  }
  const bool gated = recipe.feed_forward != FeedForward::kDense;
  RETURN_IF_ERROR(LoadStackedLinear(
      checkpoint, ffn_in, gated ? DenseActivation::kNone : ToDenseActivation(config.activation),
      Bias::kFused, caches, &layer->ffn_in, gated ? Bf16Output::kFloat : Bf16Output::kBf16));
  RETURN_IF_ERROR(LoadLinear(checkpoint, prefix + n.ffn_out, inter, h, biases.ffn_out,
                             DenseActivation::kNone, Bias::kKept, caches, &layer->ffn_out));
  layer->ffn_out.two_level_input = caches.int8 != nullptr && config.int8_two_level_ffn_out;
  const int window = config.attention_window(index);
  layer->band = {window > 0 ? window : -1, config.causal ? 0 : (window > 0 ? window : -1)};
  if (config.position_embedding == PositionEmbedding::kRotary) {
    layer->rotary = window > 0 && config.local_rotary_base > 0 ? 1 : 0;
  }
  return LoadNorm(checkpoint, prefix + n.ffn_norm, h, biases.norm, gamma_offset, &layer->ffn_norm);
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
    case PositionScheme::kRotary:
    case PositionScheme::kNone:
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
  // Decoder families have no norm on the embeddings.
  if (!names.embeddings_norm.empty()) {
    RETURN_IF_ERROR(LoadNorm(checkpoint, names.embeddings_norm, e, config.biases.norm,
                             GammaOffset(architecture), &emb->norm));
  }
  if (!config.has_embedding_projection()) return absl::OkStatus();
  // Float whatever the precision: one small matmul per batch.
  Linear project;
  if (absl::Status s =
          LoadLinear(checkpoint, names.embeddings_project, e, config.hidden_size, true,
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
  RETURN_IF_ERROR(LoadEmbeddings(checkpoint, architecture, config, cache, &weights.embeddings));
  // One layer at a time: num_hidden_layers comes from config.json and may lie.
  for (int i = 0; i < config.num_layers; ++i) {
    LayerWeights layer;
    RETURN_IF_ERROR(LoadLayer(checkpoint, architecture, config, i, caches, &layer));
    weights.layers.push_back(std::move(layer));
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPre) {
    RETURN_IF_ERROR(LoadNorm(checkpoint, names.final_norm, h, config.biases.norm,
                             GammaOffset(architecture), &weights.final_norm));
  }
  const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(config.head_size()));
  switch (architecture.recipe.attention_bias) {
    case AttentionBias::kNone:
      break;
    case AttentionBias::kRelativeBuckets: {
      absl::StatusOr<std::vector<float>> table =
          checkpoint.ReadFloat(names.relative_attention_bias + ".weight",
                               {config.relative_attention_buckets, config.num_heads});
      if (!table.ok()) return table.status();
      weights.relative_position = MakeRelativePositionBias(
          *table, config.relative_attention_buckets, config.num_heads, config.max_length(),
          config.relative_attention_max_distance, softmax_scale);
      break;
    }
    case AttentionBias::kAlibi:
      weights.relative_position =
          MakeAlibiBias(config.num_heads, config.max_length(), softmax_scale);
      break;
  }
  if (config.position_embedding == PositionEmbedding::kRotary) {
    // Index 0: the global layers' theta; 1: the local layers' (LoadLayer).
    weights.rotary.push_back(MakeRotaryTable(config.rotary, config.rotary.base, config.head_size(),
                                             config.max_length()));
    if (config.local_rotary_base > 0) {
      weights.rotary.push_back(MakeRotaryTable(config.rotary, config.local_rotary_base,
                                               config.head_size(), config.max_length()));
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
