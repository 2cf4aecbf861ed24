// The task heads a checkpoint may carry on top of the encoder: a sequence
// classifier (cross-encoder rerankers are classifiers with one label), the
// masked-LM head that SPLADE turns into sparse lexical weights, and the
// per-token heads of BAAI/bge-m3 (lexical weights, ColBERT vectors). The
// Encoder loads them when present (Encoder::classifier(),
// Encoder::has_masked_lm_head(), Encoder::has_lexical_weights(),
// Encoder::multi_vector()) and applies them to an EncodeResult.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/token_rows.h"

namespace engine {

// How a classifier's logits become scores: the sentence-transformers
// CrossEncoder activation_fn of config.json where present, else sigmoid for
// one label, softmax for several, sigmoid per label for
// problem_type "multi_label_classification".
enum class ScoreActivation { kIdentity, kSigmoid, kSoftmax };

const char* ScoreActivationName(ScoreActivation activation);
// Applies `activation` to `n` logits in place (softmax over all n).
void ApplyScoreActivation(ScoreActivation activation, float* values, int n);

// A reranker that scores a prompt built around each (query, document) pair
// instead of the tokenizer's pair encoding (Qwen3-Reranker): prefix + middle
// with "{instruction}", "{query}" and "{document}" replaced + suffix, each
// part tokenized without special tokens; a document too long for the model
// is cut at its end, never the query or the prompt.
struct PairPrompt {
  std::string prefix;
  std::string middle;
  std::string suffix;
  std::string default_instruction;
};

struct ClassifierHead {
  int num_labels = 0;
  // id2label in id order; "LABEL_<i>" where config.json has none.
  std::vector<std::string> labels;
  ScoreActivation activation = ScoreActivation::kSigmoid;
  // The tokens of the last layer the head reads: the first (BERT's pooler,
  // RoBERTa-style heads, DistilBERT, ELECTRA, ModernBERT's "cls"), the last
  // (causal-LM scorers), or all (ModernBERT's "mean").
  TokenRows reads = TokenRows::kFirst;
};

// SPLADE: weight(token id) = pool over the input's tokens of act(logit),
// as sentence-transformers' SpladePooling config says.
enum class SparseActivation { kLog1pRelu, kRelu };
enum class SparsePooling { kMax, kSum };

struct SparseOptions {
  SparseActivation activation = SparseActivation::kLog1pRelu;
  SparsePooling pooling = SparsePooling::kMax;
  // Keep only the largest this many weights; 0 keeps every weight above zero.
  int max_active_dims = 0;
};

struct SparseEntry {
  int32_t id = 0;
  float weight = 0.0f;
};

// A multi-vector (ColBERT) output: one vector per kept token, W h (+ b),
// each L2-normalized. bge-m3's colbert_linear leaves out the first token.
struct MultiVectorHead {
  int dimensions = 0;
  bool skip_first_token = false;
  std::string source;  // the file the projection came from, for logs
  // The MaxSim score of a query against a document: the sum over the
  // query's vectors of the best dot product with the document's (PyLate),
  // or with `mean_score` that sum divided by the query's vector count
  // (FlagEmbedding's colbert_score for bge-m3).
  bool mean_score = false;
};

// MaxSim of `query` (query_rows x dimensions) against `document`
// (document_rows x dimensions), as `head` defines it; 0 for an empty side.
float MaxSimScore(const MultiVectorHead& head, const float* query, int query_rows,
                  const float* document, int document_rows);

}  // namespace engine
