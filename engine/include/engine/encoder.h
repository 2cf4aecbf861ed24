// The encoder engine: loads a model directory (any family of the
// architecture registry, src/families/) and runs its forward pass on packed
// (padding-free) batches of token sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/config.h"
#include "engine/heads.h"
#include "engine/isa.h"
#include "engine/token_rows.h"

namespace engine {

class ModelDirectory;
class Tokenizer;
struct SentencePipeline;

// What the model-directory loader (engine/model_contents.h) gives the
// encoder besides the directory: config.json parsed, and the tokenizer and
// sentence-transformers pipeline on demand (the heads that need them ask;
// each is loaded once by the loader and shared with the server).
struct EncoderSources {
  const nlohmann::json* config_json = nullptr;
  // For heads that name tokens (bge-m3's lexical weights leave out the
  // special tokens; a causal-LM scorer's judgment tokens).
  std::function<absl::StatusOr<const Tokenizer*>()> tokenizer;
  // For PyLate's ColBERT projection (SentencePipeline::token_projection).
  std::function<absl::StatusOr<const SentencePipeline*>()> pipeline;
};

// Called between two layers of a pass with the layers done and the model's
// layer count (Encoder::Encode).
using BetweenLayers = std::function<void(int layers_done, int layers)>;

// How one Encode call runs.
struct EncodeOptions {
  // The last layer's rows the caller needs (engine/token_rows.h). kFirst or
  // kLast: the result holds one state per sequence (EncodeResult::rows).
  TokenRows rows = TokenRows::kAll;
  // Called after every layer but the last, on the calling thread, outside
  // any parallel region: where a server that shares the CPU among models
  // lets another model's waiting batch run (the workspace keeps this
  // batch's state meanwhile). Empty: none.
  BetweenLayers between_layers;
};

// One input sequence: token ids (with [CLS]/[SEP] already in place) and
// optional token types (empty means all zero). Views; the caller owns them.
struct Sequence {
  absl::Span<const int32_t> ids;
  absl::Span<const int32_t> token_type_ids;
  // Every token attends only to the first `visible_keys` tokens (0: to all):
  // ColBERT's query expansion, whose [MASK] tokens get states but are
  // attended to by none (a padded model's attention_mask 0 on them).
  int visible_keys = 0;
};

// Pooling of a sequence's last hidden states into one vector.
//   kNone:   no pooling; all token states are returned.
//   kCls:    the first token's state.
//   kMean:   the mean over the sequence's tokens (padding never counts: batches are packed).
//   kPooler: BERT's pooler head, tanh(W * h_cls + b); needs pooler.dense in the checkpoint.
// sentence-transformers' other Pooling modes:
//   kMax:          the per-dimension maximum over the tokens.
//   kMeanSqrtLen:  the sum over the tokens divided by sqrt(token count).
//   kWeightedMean: the mean weighted by position (token t, from 0, weighs t + 1).
//   kLastToken:    the last token's state.
enum class Pooling { kNone, kCls, kMean, kPooler, kMax, kMeanSqrtLen, kWeightedMean, kLastToken };

const char* PoolingName(Pooling pooling);
// Scales `values` to unit L2 norm in place; a zero vector stays zero.
void L2Normalize(float* values, int64_t n);
absl::StatusOr<Pooling> ParsePooling(const std::string& name);

// The last hidden states of a batch. `offsets` are always the real token
// offsets: sequence i has num_tokens(i) tokens, whatever `rows` holds.
//   rows kAll: packed, sequence i owns rows [offsets[i], offsets[i+1]) of
//     `hidden_states` ([total_tokens, hidden_size]).
//   rows kFirst / kLast: `hidden_states` is [num_sequences, hidden_size], row
//     i the first / last token of sequence i (a compact result); the other
//     tokens' states were never computed. sequence_states() is null then, and
//     Encoder's readers that need every token refuse such a result.
// Reusing one EncodeResult across calls avoids reallocating its buffers.
struct EncodeResult {
  int hidden_size = 0;
  TokenRows rows = TokenRows::kAll;
  std::vector<int> offsets;
  std::vector<float> hidden_states;

  int num_sequences() const { return static_cast<int>(offsets.size()) - 1; }
  int num_tokens(int i) const { return offsets[i + 1] - offsets[i]; }
  // Every token state of sequence i; null on a compact result.
  const float* sequence_states(int i) const {
    if (rows != TokenRows::kAll) return nullptr;
    return hidden_states.data() + static_cast<size_t>(offsets[i]) * hidden_size;
  }
  // The state of token `t` of sequence i, or null where the result does not
  // hold it (a compact result keeps one token per sequence).
  const float* token_state(int i, int t) const;
};

class Encoder {
 public:
  // Loads config.json and the safetensors weights (single file or sharded) from `model_dir`.
  // Errors name the file and, for weights, the tensor. A thin call over
  // LoadModelContents (engine/model_contents.h) for the CLI and tests.
  static absl::StatusOr<std::unique_ptr<Encoder>> Load(const std::string& model_dir,
                                                       const EncoderOptions& options);
  // The encoder of an open directory whose config.json gave `config`.
  static absl::StatusOr<std::unique_ptr<Encoder>> Load(ModelDirectory& directory,
                                                       const ModelConfig& config,
                                                       const EncoderSources& sources,
                                                       const EncoderOptions& options);
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  const ModelConfig& config() const;
  const EncoderOptions& options() const;
  // The OpenMP threads a batch runs on: options().threads, or for 0 the
  // default of engine/thread_count.h.
  int threads() const;
  bool has_pooler() const;
  // The instruction-set level the process runs (engine/isa.h).
  IsaLevel isa() const;

  // Checks one sequence against the model (ids within the vocabulary, token
  // types within config().token_types() and of matching length, length
  // within config().max_length() and max_batch_tokens). Thread-safe.
  absl::Status Validate(const Sequence& sequence) const;

  // Runs the encoder over `batch`, writing the last hidden states to `result`
  // (all of them, or the rows options.rows keeps). Not thread-safe: an
  // Encoder owns one workspace, so calls on one Encoder must not overlap
  // (the server runs one batch at a time). Every other method is const and
  // thread-safe.
  absl::Status Encode(absl::Span<const Sequence> batch, EncodeResult* result,
                      const EncodeOptions& options = {});

  // Pools sequence `index` of `result` into `out` (hidden_size floats),
  // optionally L2-normalized. kNone is not a pooling here. On a compact
  // result only the pooling of its kept token (kCls or kPooler on kFirst,
  // kLastToken on kLast); others are FailedPrecondition. Thread-safe.
  absl::Status Pool(const EncodeResult& result, int index, Pooling pooling, bool normalize,
                    float* out) const;

  // The sequence-classification head of the checkpoint, or null when it has
  // none (engine/heads.h).
  const ClassifierHead* classifier() const;
  // Raw logits of sequence `index` of `result` (classifier()->num_labels
  // floats; the score activation is the caller's). FailedPrecondition
  // without a classifier, or on a compact result without the token the
  // head reads (ClassifierHead::reads). Thread-safe.
  absl::Status Classify(const EncodeResult& result, int index, float* logits) const;
  // The prompt a causal-LM reranker scores pairs in (Qwen3-Reranker: its
  // classifier() is the judgment "yes" against "no" at the last token), or
  // null where pairs are the tokenizer's pair encoding.
  const PairPrompt* pair_prompt() const;

  // Whether the checkpoint carries its masked-LM head (SPLADE).
  bool has_masked_lm_head() const;
  // SPLADE weights of sequence `index`: the (token id, weight) pairs above
  // zero, by descending weight, at most options.max_active_dims of them
  // when that is set. FailedPrecondition without a masked-LM head.
  // Thread-safe.
  absl::Status Sparse(const EncodeResult& result, int index, const SparseOptions& options,
                      std::vector<SparseEntry>* out) const;

  // Whether the directory has bge-m3's lexical-weights head (sparse_linear.pt).
  bool has_lexical_weights() const;
  // bge-m3's sparse output of sequence `index` (`ids` its token ids): the
  // (token id, weight) pairs above zero, the maximum per id, the special
  // tokens left out, by descending weight, at most max_active_dims (0: all).
  // FailedPrecondition without the head. Thread-safe.
  absl::Status LexicalWeights(const EncodeResult& result, int index, absl::Span<const int32_t> ids,
                              int max_active_dims, std::vector<SparseEntry>* out) const;

  // The multi-vector (ColBERT) head, or null (bge-m3's colbert_linear.pt).
  const MultiVectorHead* multi_vector() const;
  // Sequence `index`'s vectors: one per kept token (`keep`: a flag per
  // token, empty keeps all; the head may leave out the first), each
  // normalized; `out` gets *rows x multi_vector()->dimensions floats.
  // FailedPrecondition without the head. Thread-safe.
  absl::Status MultiVectors(const EncodeResult& result, int index, absl::Span<const uint8_t> keep,
                            std::vector<float>* out, int* rows) const;

 private:
  struct Impl;
  explicit Encoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
