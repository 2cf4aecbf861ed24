// The task heads' weights and math (engine/heads.h is the public side): the
// sequence classifier on the first token's state (or the mean of the
// sequence's) and the masked-LM head SPLADE pools into sparse lexical
// weights. Loaded by the names of the
// family's architecture (models/architecture.h); float whatever the
// encoder's precision (one row per sequence for the classifier, and the
// masked-LM decoder is read once per 64 tokens).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "engine/heads.h"
#include "families/architecture.h"
#include "io/checkpoint.h"

namespace engine {

// A torch.nn.Linear in float: weight [out, in], bias [out].
struct HeadLinear {
  int64_t in = 0;
  int64_t out = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

// y[rows, out] = x[rows, in] * W^T + b (no bias: zeros).
void ApplyLinear(const HeadLinear& linear, const float* x, int64_t rows, float* y);

struct ClassifierWeights {
  ClassifierHead head;
  HeadPooling pooling = HeadPooling::kFirstToken;
  HeadLinear dense;  // H -> H; empty weight: none (out reads the pooled state)
  Activation activation = Activation::kGeluErf;
  bool tanh = false;  // tanh instead of `activation`
  // A LayerNorm after the activation when norm_gamma is not empty; beta
  // zeros where the checkpoint has none.
  std::vector<float> norm_gamma;  // [H]
  std::vector<float> norm_beta;   // [H]
  float norm_eps = 1e-12f;
  HeadLinear out;  // H -> num_labels
};

struct MaskedLmWeights {
  HeadLinear transform;  // H -> E (bias zeros where the checkpoint has none)
  Activation activation = Activation::kGeluErf;
  bool tanh = false;              // tanh instead of `activation`
  std::vector<float> norm_gamma;  // [E]
  std::vector<float> norm_beta;   // [E]; zeros where the checkpoint has none
  float norm_eps = 1e-12f;
  int64_t vocab = 0;
  // [vocab, E]: `own_decoder` when the checkpoint has the weight, else the
  // word embeddings (tied), which outlive this.
  std::vector<float> own_decoder;
  const float* decoder = nullptr;
  std::vector<float> bias;  // [vocab]; zeros where the checkpoint has none
};

// The classifier's settings from config.json: labels (id2label, or
// num_labels, else none: the loader takes the count from the weights) and
// the score activation. An unknown sentence-transformers activation_fn is
// an error naming `source` and the value.
struct ClassifierConfig {
  ClassifierHead head;
  bool multi_label = false;     // problem_type multi_label_classification
  bool activation_set = false;  // by the CrossEncoder's activation_fn
  // The activation for `num_labels` labels when activation_fn does not say.
  ScoreActivation DefaultActivation(int num_labels) const {
    return num_labels == 1 || multi_label ? ScoreActivation::kSigmoid : ScoreActivation::kSoftmax;
  }
};
absl::StatusOr<ClassifierConfig> ParseClassifierConfig(const nlohmann::json& config_json,
                                                       const std::string& source);

// What config.json says of a head by the family's keys (ClassifierHeadNames,
// MaskedLmHeadNames; a family without a key gets its names' fallback):
// which of its biases the checkpoint holds, its activation and the
// classifier's pooling. An unknown activation or pooling, or a bias key that
// is not a boolean, is an error naming `source`, the key and the value.
struct HeadSettings {
  bool dense_bias = true;   // the classifier's dense, the masked-LM transform
  bool norm_bias = true;    // the LayerNorm's beta
  bool output_bias = true;  // the masked-LM output (the classifier's always has one)
  Activation activation = Activation::kGeluErf;
  bool tanh = false;  // tanh instead of `activation`
  HeadPooling pooling = HeadPooling::kFirstToken;
};
absl::StatusOr<HeadSettings> ReadClassifierSettings(const ClassifierHeadNames& names,
                                                    const ModelConfig& config,
                                                    const nlohmann::json& config_json,
                                                    const std::string& source);
absl::StatusOr<HeadSettings> ReadMaskedLmSettings(const MaskedLmHeadNames& names,
                                                  const ModelConfig& config,
                                                  const nlohmann::json& config_json,
                                                  const std::string& source);

// Whether the checkpoint holds the family's classifier tensors.
bool HasClassifier(const Checkpoint& checkpoint, const ClassifierHeadNames& names);

// Whether the checkpoint holds the family's masked-LM head: the transform
// and, when `output_bias`, the output bias; without an output bias, a
// decoder weight or no classifier sharing the transform
// (MaskedLmHeadNames::classifier_out).
bool HasMaskedLm(const Checkpoint& checkpoint, const MaskedLmHeadNames& names, bool output_bias);

// Null (and OK) when the checkpoint lacks the family's classifier tensors;
// config.json (`config_json`, named `source` in errors) is read for the
// head's settings only when they are there, so a model without the head
// never fails on them.
absl::StatusOr<std::unique_ptr<ClassifierWeights>> LoadClassifier(const Checkpoint& checkpoint,
                                                                  const ClassifierHeadNames& names,
                                                                  const ModelConfig& config,
                                                                  const nlohmann::json& config_json,
                                                                  const std::string& source);

// Null (and OK) when the checkpoint lacks the head (HasMaskedLm, with
// config.json's say on the output bias, read only when the transform is
// there); the decoder falls back to `word_embeddings` ([vocab, E]) when its
// weight is absent.
absl::StatusOr<std::unique_ptr<MaskedLmWeights>> LoadMaskedLm(
    const Checkpoint& checkpoint, const MaskedLmHeadNames& names, const ModelConfig& config,
    const nlohmann::json& config_json, const std::string& source, const float* word_embeddings);

// A causal LM's judgment as a one-label classifier (CausalLmScorerNames):
// out = lm_head[positive] - lm_head[negative] on the last token, no bias, so
// that sigmoid(logit) = softmax(positive, negative)[positive]. Only those two
// rows of the LM head (or, tied, of `word_embeddings` [vocab, H]) are read.
absl::StatusOr<std::unique_ptr<ClassifierWeights>> LoadCausalLmScorer(
    const Checkpoint& checkpoint, const CausalLmScorerNames& names, const ModelConfig& config,
    const nlohmann::json& config_json, const std::string& source, int32_t positive_id,
    int32_t negative_id, const float* word_embeddings);

// logits (num_labels floats) of one sequence from its `tokens` states
// ([tokens, H], tokens >= 1): the first token's or their mean, as
// `weights.pooling` says.
void RunClassifier(const ClassifierWeights& weights, const float* states, int64_t tokens,
                   float* logits);

// SPLADE weights of one sequence's `tokens` states ([tokens, H]): the
// decoder runs on chunks of rows into per-call scratch, pooled as it goes.
void RunSparse(const MaskedLmWeights& weights, const float* states, int64_t tokens,
               const SparseOptions& options, std::vector<SparseEntry>* out);

}  // namespace engine
