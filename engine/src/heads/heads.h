// The task heads' weights and math (engine/heads.h is the public side): the
// sequence classifier on the first token's state and the masked-LM head
// SPLADE pools into sparse lexical weights. Loaded by the names of the
// family's architecture (models/architecture.h); float whatever the
// encoder's precision (one row per sequence for the classifier, and the
// masked-LM decoder is read once per 64 tokens).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "engine/heads.h"
#include "io/checkpoint.h"
#include "models/architecture.h"

namespace engine {

// A torch.nn.Linear in float: weight [out, in], bias [out].
struct HeadLinear {
  int64_t in = 0;
  int64_t out = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

struct ClassifierWeights {
  ClassifierHead head;
  HeadLinear dense;  // H -> H
  Activation activation = Activation::kGeluErf;
  bool tanh = false;  // tanh instead of `activation`
  HeadLinear out;     // H -> num_labels
};

struct MaskedLmWeights {
  HeadLinear transform;  // H -> E
  Activation activation = Activation::kGeluErf;
  std::vector<float> norm_gamma;  // [E]
  std::vector<float> norm_beta;   // [E]
  float norm_eps = 1e-12f;
  int64_t vocab = 0;
  // [vocab, E]: `own_decoder` when the checkpoint has the weight, else the
  // word embeddings (tied), which outlive this.
  std::vector<float> own_decoder;
  const float* decoder = nullptr;
  std::vector<float> bias;  // [vocab]
};

// The classifier's settings from config.json text: labels (id2label, or
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
absl::StatusOr<ClassifierConfig> ParseClassifierConfig(const std::string& json_text,
                                                       const std::string& source);

// Whether the checkpoint holds the family's classifier tensors.
bool HasClassifier(const Checkpoint& checkpoint, const ClassifierHeadNames& names);

// Null (and OK) when the checkpoint lacks the family's classifier tensors;
// config.json (`config_text`, named `source` in errors) is read for the
// head's settings only when they are there, so a model without the head
// never fails on them.
absl::StatusOr<std::unique_ptr<ClassifierWeights>> LoadClassifier(const Checkpoint& checkpoint,
                                                                  const ClassifierHeadNames& names,
                                                                  const ModelConfig& config,
                                                                  const std::string& config_text,
                                                                  const std::string& source);

// Null (and OK) when the checkpoint lacks the transform or the bias; the
// decoder falls back to `word_embeddings` ([vocab, E]) when its weight is absent.
absl::StatusOr<std::unique_ptr<MaskedLmWeights>> LoadMaskedLm(const Checkpoint& checkpoint,
                                                              const MaskedLmHeadNames& names,
                                                              const ModelConfig& config,
                                                              const float* word_embeddings);

// logits (num_labels floats) of one sequence from its first token's state.
void RunClassifier(const ClassifierWeights& weights, const float* first_token, float* logits);

// SPLADE weights of one sequence's `tokens` states ([tokens, H]): the
// decoder runs on chunks of rows into per-call scratch, pooled as it goes.
void RunSparse(const MaskedLmWeights& weights, const float* states, int64_t tokens,
               const SparseOptions& options, std::vector<SparseEntry>* out);

}  // namespace engine
