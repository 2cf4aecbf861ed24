// The batcher's backend on the real engine: one Encode per batch (of one
// token per sequence from the last layer when every input can do with it:
// kept_rows.h), then per input what its spec asks: a pipeline Embed
// (engine/sentence_pipeline.h) or a copy of the token states for kNone, the
// classifier's logits, sparse weights, or several outputs of the one pass
// (kMulti).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/encoder.h"
#include "engine/sentence_pipeline.h"
#include "server/core/batching/backend.h"

namespace server::core {

class EngineBackend : public Backend {
 public:
  // `pipeline` (the model's sentence-transformers pipeline) must outlive the
  // backend; null: none (pooling by the spec's mode alone, no Dense).
  explicit EngineBackend(engine::Encoder* encoder,
                         const engine::SentencePipeline* pipeline = nullptr)
      : encoder_(encoder), pipeline_(pipeline != nullptr ? pipeline : &kNoPipeline) {}

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override;
  void SetBetweenLayers(engine::BetweenLayers between_layers) override {
    options_.between_layers = std::move(between_layers);
  }

 private:
  // Each fills `out` for sequence `index` of result_.
  absl::Status Classify(int index, InputOutput* out) const;
  absl::Status Sparse(const engine::Sequence& sequence, int index,
                      const engine::SparseOptions& options, InputOutput* out) const;
  absl::Status Embedding(int index, const OutputSpec& spec, InputOutput* out) const;
  absl::Status Multi(const engine::Sequence& sequence, int index, const OutputSpec& spec,
                     InputOutput* out);

  static const engine::SentencePipeline kNoPipeline;
  engine::Encoder* const encoder_;
  const engine::SentencePipeline* const pipeline_;
  engine::EncodeOptions options_;  // between_layers (empty: none); rows set per batch
  engine::EncodeResult result_;    // reused across batches: its buffers stay allocated
  std::vector<uint8_t> keep_;      // Multi's per-token flags (a document's skiplist)
};

}  // namespace server::core
