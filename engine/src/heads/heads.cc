#include "heads/heads.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "heads/pooling.h"
#include "nlohmann/json.hpp"
#include "oneapi/dnnl/dnnl.h"

namespace engine {
namespace {

// Rows of the masked-LM decoder's output computed at once: up to 64, fewer
// for large vocabularies so that the scratch stays within kDecoderScratch
// floats (16 MB: 64 rows of BERT's 30k vocabulary, 16 of XLM-R's 250k).
constexpr int64_t kDecoderRows = 64;
constexpr int64_t kDecoderScratch = int64_t{4} << 20;

// A Linear's weight and, when `bias`, its bias; zeros otherwise.
absl::Status LoadHeadLinear(const Checkpoint& checkpoint, const std::string& prefix, int64_t in,
                            int64_t out, bool bias, HeadLinear* linear) {
  absl::StatusOr<std::vector<float>> weight = checkpoint.ReadFloat(prefix + ".weight", {out, in});
  if (!weight.ok()) return weight.status();
  linear->in = in;
  linear->out = out;
  linear->weight = *std::move(weight);
  if (!bias) {
    linear->bias.assign(static_cast<size_t>(out), 0.0f);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<float>> values = checkpoint.ReadFloat(prefix + ".bias", {out});
  if (!values.ok()) return values.status();
  linear->bias = *std::move(values);
  return absl::OkStatus();
}

// A LayerNorm's weight and, when `bias`, its bias; zeros otherwise.
absl::Status LoadHeadNorm(const Checkpoint& checkpoint, const std::string& prefix, int64_t n,
                          bool bias, std::vector<float>* gamma, std::vector<float>* beta) {
  absl::StatusOr<std::vector<float>> weight = checkpoint.ReadFloat(prefix + ".weight", {n});
  if (!weight.ok()) return weight.status();
  *gamma = *std::move(weight);
  if (!bias) {
    beta->assign(static_cast<size_t>(n), 0.0f);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<float>> values = checkpoint.ReadFloat(prefix + ".bias", {n});
  if (!values.ok()) return values.status();
  *beta = *std::move(values);
  return absl::OkStatus();
}

float Activate(Activation activation, float x) {
  switch (activation) {
    case Activation::kGeluErf:
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Activation::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Activation::kSilu:
      return x / (1.0f + std::exp(-x));
  }
  return x;
}

void LayerNormRow(float* row, int64_t n, const float* gamma, const float* beta, float eps) {
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += row[i];
  mean /= static_cast<double>(n);
  double var = 0.0;
  for (int64_t i = 0; i < n; ++i) var += (row[i] - mean) * (row[i] - mean);
  var /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    row[i] = static_cast<float>((row[i] - mean) * inv) * gamma[i] + beta[i];
  }
}

}  // namespace

void ApplyLinear(const HeadLinear& linear, const float* x, int64_t rows, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * linear.out;
    if (linear.bias.empty()) {
      std::fill(row, row + linear.out, 0.0f);
    } else {
      std::copy(linear.bias.begin(), linear.bias.end(), row);
    }
  }
  dnnl_sgemm('N', 'T', rows, linear.out, linear.in, 1.0f, x, linear.in, linear.weight.data(),
             linear.in, 1.0f, y, linear.out);
}

bool HasClassifier(const Checkpoint& checkpoint, const ClassifierHeadNames& names) {
  return !names.out.empty() && checkpoint.Has(names.out + ".weight") &&
         checkpoint.Has(names.dense + ".weight");
}

bool HasMaskedLm(const Checkpoint& checkpoint, const MaskedLmHeadNames& names, bool output_bias) {
  if (names.transform.empty() || !checkpoint.Has(names.transform + ".weight")) return false;
  if (output_bias) {
    return std::any_of(names.bias.begin(), names.bias.end(),
                       [&](const std::string& n) { return checkpoint.Has(n); });
  }
  return checkpoint.Has(names.decoder + ".weight") || names.classifier_out.empty() ||
         !checkpoint.Has(names.classifier_out + ".weight");
}

absl::StatusOr<std::unique_ptr<ClassifierWeights>> LoadClassifier(const Checkpoint& checkpoint,
                                                                  const ClassifierHeadNames& names,
                                                                  const ModelConfig& config,
                                                                  const nlohmann::json& config_json,
                                                                  const std::string& source) {
  if (!HasClassifier(checkpoint, names)) return nullptr;
  absl::StatusOr<ClassifierConfig> parsed = ParseClassifierConfig(config_json, source);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<HeadSettings> settings =
      ReadClassifierSettings(names, config, config_json, source);
  if (!settings.ok()) return settings.status();
  const ClassifierConfig& head_config = *parsed;
  const int64_t h = config.hidden_size;
  auto weights = std::make_unique<ClassifierWeights>();
  weights->head = head_config.head;
  ClassifierHead& head = weights->head;
  if (head.num_labels == 0) {
    // No id2label nor num_labels: as many labels as the weight has rows.
    const auto& shape = checkpoint.entries().at(names.out + ".weight").view->shape;
    if (shape.size() != 2 || shape[0] <= 0 || shape[0] > (1 << 20)) {
      return checkpoint.Check(names.out + ".weight", {1, h});  // the error naming the tensor
    }
    head.num_labels = static_cast<int>(shape[0]);
    for (int i = 0; i < head.num_labels; ++i) head.labels.push_back(absl::StrCat("LABEL_", i));
    if (!head_config.activation_set) {
      head.activation = head_config.DefaultActivation(head.num_labels);
    }
  }
  if (absl::Status s =
          LoadHeadLinear(checkpoint, names.dense, h, h, settings->dense_bias, &weights->dense);
      !s.ok()) {
    return s;
  }
  if (!names.norm.empty()) {
    RETURN_IF_ERROR(LoadHeadNorm(checkpoint, names.norm, h, settings->norm_bias,
                                 &weights->norm_gamma, &weights->norm_beta));
    weights->norm_eps = config.layer_norm_eps;
  }
  if (absl::Status s =
          LoadHeadLinear(checkpoint, names.out, h, head.num_labels, /*bias=*/true, &weights->out);
      !s.ok()) {
    return s;
  }
  weights->pooling = settings->pooling;
  head.reads = settings->pooling == HeadPooling::kFirstToken  ? TokenRows::kFirst
               : settings->pooling == HeadPooling::kLastToken ? TokenRows::kLast
                                                              : TokenRows::kAll;
  weights->tanh = settings->tanh;
  weights->activation = settings->activation;
  return weights;
}

absl::StatusOr<std::unique_ptr<ClassifierWeights>> LoadCausalLmScorer(
    const Checkpoint& checkpoint, const CausalLmScorerNames& names, const ModelConfig& config,
    const nlohmann::json& config_json, const std::string& source, int32_t positive_id,
    int32_t negative_id, const float* word_embeddings) {
  const int64_t h = config.hidden_size;
  const int64_t v = config.vocab_size;
  for (int32_t id : {positive_id, negative_id}) {
    if (id < 0 || id >= v) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": the judgment token id ", id,
                                                     " is outside the vocabulary of ", v));
    }
  }
  bool tied = false;
  if (names.tie_key != nullptr) {
    const auto found = config_json.find(names.tie_key);
    if (found != config_json.end() && !found->is_null()) {
      if (!found->is_boolean()) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ": \"", names.tie_key, "\" must be true or false, got ", found->dump()));
      }
      tied = found->get<bool>();
    }
  }
  auto weights = std::make_unique<ClassifierWeights>();
  weights->head.num_labels = 1;
  weights->head.labels = {names.positive_token};
  weights->head.activation = ScoreActivation::kSigmoid;
  weights->pooling = HeadPooling::kLastToken;
  weights->head.reads = TokenRows::kLast;
  HeadLinear& out = weights->out;
  out.in = h;
  out.out = 1;
  out.weight.assign(static_cast<size_t>(h), 0.0f);
  out.bias.assign(1, 0.0f);
  const std::string lm_head = names.lm_head + ".weight";
  std::vector<float> row(static_cast<size_t>(h));
  for (auto [id, sign] : {std::pair<int32_t, float>{positive_id, 1.0f}, {negative_id, -1.0f}}) {
    const float* values = word_embeddings + static_cast<int64_t>(id) * h;
    if (!tied) {
      // One row of the [vocab, H] head (the whole tensor's shape checked).
      RETURN_IF_ERROR(checkpoint.ReadFloatRow(lm_head, {v, h}, id, row.data()));
      values = row.data();
    }
    for (int64_t c = 0; c < h; ++c) out.weight[c] += sign * values[c];
  }
  return weights;
}

absl::StatusOr<std::unique_ptr<MaskedLmWeights>> LoadMaskedLm(
    const Checkpoint& checkpoint, const MaskedLmHeadNames& names, const ModelConfig& config,
    const nlohmann::json& config_json, const std::string& source, const float* word_embeddings) {
  if (names.transform.empty() || !checkpoint.Has(names.transform + ".weight")) return nullptr;
  absl::StatusOr<HeadSettings> settings = ReadMaskedLmSettings(names, config, config_json, source);
  if (!settings.ok()) return settings.status();
  if (!HasMaskedLm(checkpoint, names, settings->output_bias)) return nullptr;
  const int64_t h = config.hidden_size;
  const int64_t e = config.embedding_width();
  const int64_t v = config.vocab_size;
  auto weights = std::make_unique<MaskedLmWeights>();
  RETURN_IF_ERROR(
      LoadHeadLinear(checkpoint, names.transform, h, e, settings->dense_bias, &weights->transform));
  weights->activation = settings->activation;
  weights->tanh = settings->tanh;
  RETURN_IF_ERROR(LoadHeadNorm(checkpoint, names.norm, e, settings->norm_bias, &weights->norm_gamma,
                               &weights->norm_beta));
  weights->norm_eps = config.layer_norm_eps;
  weights->vocab = v;
  if (checkpoint.Has(names.decoder + ".weight")) {
    absl::StatusOr<std::vector<float>> decoder =
        checkpoint.ReadFloat(names.decoder + ".weight", {v, e});
    if (!decoder.ok()) return decoder.status();
    if (std::equal(decoder->begin(), decoder->end(), word_embeddings)) {
      weights->decoder = word_embeddings;  // saved tied: no second copy
    } else {
      weights->own_decoder = *std::move(decoder);
      weights->decoder = weights->own_decoder.data();
    }
  } else {
    // Tied, as transformers ties it unless config.json's
    // tie_word_embeddings is false: then the decoder is the checkpoint's
    // own, and without it the head would be served with the wrong weights.
    const auto tie = config_json.find("tie_word_embeddings");
    if (tie != config_json.end() && *tie == false) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": unsupported tie_word_embeddings false without the tensor ", names.decoder,
          ".weight (supported: true, the decoder tied to the word embeddings)"));
    }
    weights->decoder = word_embeddings;
  }
  if (!settings->output_bias) {
    weights->bias.assign(static_cast<size_t>(v), 0.0f);
    return weights;
  }
  // HasMaskedLm found one of them.
  const auto bias_name = std::find_if(names.bias.begin(), names.bias.end(),
                                      [&](const std::string& n) { return checkpoint.Has(n); });
  absl::StatusOr<std::vector<float>> bias = checkpoint.ReadFloat(*bias_name, {v});
  if (!bias.ok()) return bias.status();
  weights->bias = *std::move(bias);
  return weights;
}

void RunClassifier(const ClassifierWeights& weights, const float* states, int64_t tokens,
                   float* logits) {
  const float* pooled = states;  // HeadPooling::kFirstToken
  std::vector<float> mean;
  switch (weights.pooling) {
    case HeadPooling::kFirstToken:
      break;
    case HeadPooling::kMean:
      mean.resize(static_cast<size_t>(weights.out.in));
      MeanPool(states, tokens, weights.out.in, mean.data());
      pooled = mean.data();
      break;
    case HeadPooling::kLastToken:
      pooled = states + (tokens - 1) * weights.out.in;
      break;
  }
  if (weights.dense.weight.empty()) {
    ApplyLinear(weights.out, pooled, 1, logits);
    return;
  }
  std::vector<float> hidden(static_cast<size_t>(weights.dense.out));
  ApplyLinear(weights.dense, pooled, 1, hidden.data());
  for (float& x : hidden) x = weights.tanh ? std::tanh(x) : Activate(weights.activation, x);
  if (!weights.norm_gamma.empty()) {
    LayerNormRow(hidden.data(), weights.dense.out, weights.norm_gamma.data(),
                 weights.norm_beta.data(), weights.norm_eps);
  }
  ApplyLinear(weights.out, hidden.data(), 1, logits);
}

void RunSparse(const MaskedLmWeights& weights, const float* states, int64_t tokens,
               const SparseOptions& options, std::vector<SparseEntry>* out) {
  out->clear();
  const int64_t e = weights.transform.out;
  const int64_t v = weights.vocab;
  const int64_t chunk = std::max<int64_t>(
      1, std::min({kDecoderRows, tokens, std::max<int64_t>(1, kDecoderScratch / v)}));
  // Per call: Sparse is thread-safe and the scratch is bounded by the chunk.
  std::vector<float> transformed(static_cast<size_t>(chunk * e));
  std::vector<float> logits(static_cast<size_t>(chunk * v));
  std::vector<float> pooled(static_cast<size_t>(v), 0.0f);
  const bool log1p = options.activation == SparseActivation::kLog1pRelu;
  const bool sum = options.pooling == SparsePooling::kSum;
  for (int64_t begin = 0; begin < tokens; begin += chunk) {
    const int64_t rows = std::min(chunk, tokens - begin);
    ApplyLinear(weights.transform, states + begin * weights.transform.in, rows, transformed.data());
    for (int64_t r = 0; r < rows; ++r) {
      float* row = transformed.data() + r * e;
      for (int64_t i = 0; i < e; ++i) {
        row[i] = weights.tanh ? std::tanh(row[i]) : Activate(weights.activation, row[i]);
      }
      LayerNormRow(row, e, weights.norm_gamma.data(), weights.norm_beta.data(), weights.norm_eps);
    }
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(weights.bias.begin(), weights.bias.end(), logits.begin() + r * v);
    }
    dnnl_sgemm('N', 'T', rows, v, e, 1.0f, transformed.data(), e, weights.decoder, e, 1.0f,
               logits.data(), v);
    // Max pooling keeps relu(x) and takes log1p once at the end (log1p is
    // increasing); sum pooling needs it per token, only where x > 0.
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data() + r * v;
      if (sum) {
        for (int64_t i = 0; i < v; ++i) {
          if (row[i] > 0.0f) pooled[i] += log1p ? std::log1p(row[i]) : row[i];
        }
      } else {
        for (int64_t i = 0; i < v; ++i) pooled[i] = std::max(pooled[i], row[i]);
      }
    }
  }
  if (!sum && log1p) {
    for (float& x : pooled) x = x > 0.0f ? std::log1p(x) : 0.0f;
  }
  for (int64_t i = 0; i < v; ++i) {
    if (pooled[i] > 0.0f) out->push_back({static_cast<int32_t>(i), pooled[i]});
  }
  std::sort(out->begin(), out->end(), [](const SparseEntry& a, const SparseEntry& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.id < b.id;
  });
  if (options.max_active_dims > 0 && static_cast<int>(out->size()) > options.max_active_dims) {
    out->resize(static_cast<size_t>(options.max_active_dims));
  }
}

}  // namespace engine
