// The served models: each one's pipeline (loaded model, input tokenizer,
// queue and batcher, dispatcher, metrics) and the resolution of a request's
// model name, shared by the gRPC and HTTP adapters. The engine's CPU is one
// resource: every pipeline's backend takes its turn through one EngineTurns
// (engine_turns.h), so only one model's batch runs at a time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/batcher.h"
#include "server/core/batching/batcher_observers.h"
#include "server/core/batching/engine_backend.h"
#include "server/core/batching/engine_turns.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/plans.h"

namespace server::core {

// What a client is told about a served model: built once, at start, and
// rendered by each adapter (gRPC's ModelInfo, HTTP's /info and /v1/models).
struct ModelDescription {
  std::string name;
  std::string model_type;    // config.json's spelling
  std::string architecture;  // the engine's family
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int max_length = 0;  // tokens per input, special tokens included
  int vocab_size = 0;
  engine::Pooling default_pooling = engine::Pooling::kCls;
  engine::Precision precision = engine::Precision::kFloat32;
  engine::LayerNormPlacement layer_norm_placement = engine::LayerNormPlacement::kPost;
  bool has_pooler = false;
  std::string isa;
  bool text_input = false;  // a tokenizer was loaded
  int max_inputs_per_request = 0;
  int64_t max_batch_tokens = 0;
  bool auto_truncate = false;
  // The sentence-transformers pipeline (engine/sentence_pipeline.h).
  std::vector<engine::Pooling> pooling_modes;  // in concatenation order
  std::string pooling_names;                   // "cls", "max+mean"
  int embedding_size = 0;                      // after pooling and Dense
  bool normalize = false;                      // a Normalize module
  bool include_prompt = true;
  std::map<std::string, std::string> prompts;
  std::string default_prompt_name;
  // The heads (model_heads.h): the classifier's labels in id order (none:
  // no classifier; one: a cross-encoder, served by the rerank routes too),
  // and whether SPLADE weights are served (sparse_default: a SparseEncoder,
  // whose output is sparse).
  std::vector<std::string> labels;
  bool sparse = false;
  bool sparse_default = false;
  int colbert_dimensions = 0;  // the multi-vector head's width (EncodeMulti's colbert); 0: none
  // int8/uint8 embeddings' calibration (LoadedModel's); null: none.
  std::shared_ptr<const core::QuantizationRanges> quantization_ranges;
};

ModelDescription DescribeModel(const LoadedModel& model, const RequestLimits& limits,
                               const BatcherConfig& batcher);

// encoder_model_info's labels for `model`.
ModelInfoLabels MetricsLabels(const LoadedModel& model);

// One model's pieces, in the order they are built and the reverse of the
// order they stop in.
class ModelPipeline {
 public:
  // `turns` (shared by all models) and `observer` (may be null) must outlive
  // the pipeline; `registry` is the one /metrics exports. `max_turn_tokens`:
  // see TurnTakingBackend (0 with one model).
  ModelPipeline(LoadedModel model, const BatcherConfig& batcher, const RequestLimits& limits,
                EngineTurns* turns, std::shared_ptr<prometheus::Registry> registry,
                BatcherObserver* observer, int64_t max_turn_tokens = 0);

  LoadedModel model;
  ServerMetrics metrics;
  BatcherObservers observers;
  EngineBackend engine_backend;  // the engine itself: the warm-up calls it directly
  TurnTakingBackend backend;     // what the batcher runs: in turns with the other models
  Batcher batcher;
  InputTokenizer inputs;
  EncodeDispatcher dispatcher;
  const ModelDescription description;
};

// A served model as the adapters see it (pointers outlive the ServedModels).
struct ModelRoute {
  EncodeDispatcher* dispatcher = nullptr;
  ServerMetrics* metrics = nullptr;
  ModelDescription description;
};

class ServedModels {
 public:
  // Owns the pipelines (at least one); `keys` (off: no authentication) must
  // outlive it.
  ServedModels(std::vector<std::unique_ptr<ModelPipeline>> pipelines, const ApiKeys* keys);
  // Serves pieces owned elsewhere (tests on a fake engine).
  ServedModels(std::vector<ModelRoute> routes, const ApiKeys* keys);

  // The model a request names: "" is the one model when one is served, else
  // INVALID_ARGUMENT; an unknown name is NOT_FOUND. Both messages list the
  // served names.
  absl::StatusOr<const ModelRoute*> Resolve(absl::string_view name) const;
  // The first model: where a request that names no served model is counted.
  const ModelRoute& first() const { return routes_.front(); }
  const std::vector<ModelRoute>& routes() const { return routes_; }
  const std::vector<std::unique_ptr<ModelPipeline>>& pipelines() const { return pipelines_; }
  // "a", "b" (quoted, comma-separated), for messages.
  std::string NameList() const;

  // Admission, the same for both transports: UNAUTHENTICATED without a valid
  // key (`authorization` is the header's or metadata's whole value), then
  // UNAVAILABLE once the server stops accepting, else OK. `how_to_send_key`
  // says in the transport's words where the key goes (core::Unauthenticated).
  absl::Status Admit(absl::string_view authorization, absl::string_view how_to_send_key) const;
  bool KeyAccepted(absl::string_view authorization) const;
  const ApiKeys& keys() const { return *keys_; }
  // Whether requests are accepted (false from StopAccepting on).
  bool accepting() const;
  // Every model's dispatcher refuses new requests from now on.
  void StopAccepting();

 private:
  std::vector<std::unique_ptr<ModelPipeline>> pipelines_;
  std::vector<ModelRoute> routes_;
  const ApiKeys* const keys_;
};

}  // namespace server::core
