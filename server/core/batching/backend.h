// The batcher's view of the engine: run one packed batch of sequences and
// produce one output per input. Knows nothing of gRPC. The real backend
// wraps engine::Encoder; tests use a fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "engine/encoder.h"

namespace server::core {

// Which output of the model an input wants: its embedding (pooled or per
// token), its classifier's raw logits, its sparse weights (SPLADE's masked-LM
// head, else bge-m3's lexical weights), or several of the model's outputs
// from the one pass (kMulti: OutputSpec::multi says which).
enum class OutputHead { kEmbedding, kClassify, kSparse, kMulti };

// The outputs of a kMulti input: the embedding (as kEmbedding with the
// model's pipeline), the sparse weights (as kSparse) and the multi-vector
// (ColBERT) vectors.
struct MultiOutputs {
  bool dense = false;
  bool sparse = false;
  bool multi_vector = false;
  // Token ids whose vectors are left out of the multi-vector output
  // (ColBERT's punctuation skiplist for documents); null: none. Sorted; owned
  // by the model, which outlives every request.
  const std::vector<int32_t>* skip_ids = nullptr;
};

// What a request wants back for each of its inputs.
struct OutputSpec {
  // kNone: all token states; else the one pooling mode, unless model_pooling.
  engine::Pooling pooling = engine::Pooling::kCls;
  // The model's sentence-transformers pipeline pooling (engine/sentence_pipeline.h):
  // every mode of its Pooling module, concatenated.
  bool model_pooling = false;
  // Leading tokens left out of pooling: [CLS] and the prompt's tokens when
  // the model's Pooling says include_prompt false.
  int prompt_tokens = 0;
  bool apply_dense = false;  // the pipeline's Dense layers, after pooling
  int dimensions = 0;        // Matryoshka: keep the first this many values (0: all), then
  bool normalize = false;    // L2; applies to pooled vectors and to each token state
  OutputHead head = OutputHead::kEmbedding;
  engine::SparseOptions sparse;  // kSparse, and kMulti's sparse
  MultiOutputs multi;            // kMulti
};

// One input's result: `rows` x `cols` floats (rows == 1 when pooled, cols
// the embedding's size; rows == tokens and cols the hidden size for kNone;
// for kClassify rows == 1, cols == the labels' raw logits; for kSparse none,
// the entries in `sparse` by descending weight) and the number of tokens the
// input used. kMulti fills what its spec asks: the embedding as kEmbedding
// does, `sparse`, and the multi-vector output in `vectors`.
struct InputOutput {
  int rows = 0;
  int cols = 0;
  int tokens = 0;
  std::vector<float> values;
  std::vector<engine::SparseEntry> sparse;  // kSparse, kMulti
  // kMulti: vector_rows x vector_cols floats, one normalized vector per kept token.
  int vector_rows = 0;
  int vector_cols = 0;
  std::vector<float> vectors;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Runs `batch` (one engine call) and writes outputs[i] for batch[i] as
  // specs[i] asks. Called from one batcher thread at a time.
  virtual absl::Status Run(absl::Span<const engine::Sequence> batch,
                           absl::Span<const OutputSpec> specs,
                           std::vector<InputOutput>* outputs) = 0;
  // How long the last Run waited for its turn on an engine shared with other
  // models (engine_turns.h): part of the batch's wall time, not engine time.
  // Zero for a backend of its own.
  virtual std::chrono::nanoseconds last_turn_wait() const { return {}; }
  // Called between two layers of every later Run's engine pass
  // (engine::Encoder::Encode's between_layers): where an engine shared by
  // several models yields to another model's waiting batch (engine_turns.h).
  // Backends without layers ignore it.
  virtual void SetBetweenLayers(engine::BetweenLayers between_layers) {
    static_cast<void>(between_layers);
  }
};

}  // namespace server::core
