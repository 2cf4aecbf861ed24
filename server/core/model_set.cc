#include "server/core/model_set.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/isa.h"
#include "server/core/api/refusals.h"

namespace server::core {

ModelDescription DescribeModel(const LoadedModel& model, const RequestLimits& limits,
                               const BatcherConfig& batcher) {
  const engine::ModelConfig& config = model.encoder->config();
  ModelDescription description;
  description.name = model.name;
  description.model_type = config.model_type;
  description.architecture = config.architecture;
  description.hidden_size = config.hidden_size;
  description.num_layers = config.num_layers;
  description.num_heads = config.num_heads;
  description.max_length = model.max_length();
  description.vocab_size = config.vocab_size;
  description.default_pooling = model.default_pooling;
  description.precision = model.encoder->options().precision;
  description.layer_norm_placement = config.layer_norm_placement;
  description.has_pooler = model.encoder->has_pooler();
  description.isa = engine::IsaLevelName(model.encoder->isa());
  description.text_input = model.tokenizer != nullptr;
  description.max_inputs_per_request = limits.max_inputs_per_request;
  description.max_batch_tokens = batcher.max_batch_tokens;
  description.auto_truncate = limits.auto_truncate;
  const engine::SentencePipeline& pipeline = model.pipeline;
  description.pooling_modes = pipeline.pooling;
  description.pooling_names = pipeline.pooling_names();
  description.embedding_size = model.embedding_size();
  description.normalize = pipeline.normalize;
  description.include_prompt = pipeline.include_prompt;
  description.prompts = pipeline.prompts;
  description.default_prompt_name = pipeline.default_prompt_name;
  if (model.heads.classifier.has_value()) description.labels = model.heads.classifier->labels;
  description.sparse = model.heads.sparse;
  description.sparse_default = pipeline.sparse;
  if (model.heads.multi_vector.has_value()) {
    description.colbert_dimensions = model.heads.multi_vector->dimensions;
  }
  description.quantization_ranges = model.quantization_ranges;
  return description;
}

ModelInfoLabels MetricsLabels(const LoadedModel& model) {
  const engine::ModelConfig& config = model.encoder->config();
  ModelInfoLabels labels;
  labels.model = model.name;
  labels.precision = engine::PrecisionName(model.encoder->options().precision);
  labels.layer_norm = engine::LayerNormPlacementName(config.layer_norm_placement);
  labels.hidden_size = config.hidden_size;
  labels.layers = config.num_layers;
  labels.isa = engine::IsaLevelName(model.encoder->isa());
  return labels;
}

ModelPipeline::ModelPipeline(LoadedModel loaded, const BatcherConfig& batcher_config,
                             const RequestLimits& limits, EngineTurns* turns,
                             std::shared_ptr<prometheus::Registry> registry,
                             BatcherObserver* observer, int64_t max_turn_tokens)
    : model(std::move(loaded)),
      metrics(batcher_config, MetricsLabels(model), std::move(registry)),
      observers({&metrics, observer}),
      engine_backend(model.encoder.get(), &model.pipeline),
      backend(&engine_backend, turns, max_turn_tokens),
      batcher(batcher_config, &backend, SystemClock(), &observers),
      inputs(&model, limits),
      dispatcher(&inputs, &batcher, &metrics),
      description(DescribeModel(model, limits, batcher_config)) {}

namespace {

std::vector<ModelRoute> RoutesOf(const std::vector<std::unique_ptr<ModelPipeline>>& pipelines) {
  std::vector<ModelRoute> routes;
  for (const auto& pipeline : pipelines) {
    routes.push_back({&pipeline->dispatcher, &pipeline->metrics, pipeline->description});
  }
  return routes;
}

}  // namespace

ServedModels::ServedModels(std::vector<std::unique_ptr<ModelPipeline>> pipelines,
                           const ApiKeys* keys)
    : pipelines_(std::move(pipelines)), routes_(RoutesOf(pipelines_)), keys_(keys) {}

ServedModels::ServedModels(std::vector<ModelRoute> routes, const ApiKeys* keys)
    : routes_(std::move(routes)), keys_(keys) {}

std::string ServedModels::NameList() const {
  return absl::StrJoin(routes_, ", ", [](std::string* out, const ModelRoute& route) {
    absl::StrAppend(out, "\"", route.description.name, "\"");
  });
}

absl::StatusOr<const ModelRoute*> ServedModels::Resolve(absl::string_view name) const {
  if (name.empty()) {
    if (routes_.size() == 1) return &routes_.front();
    return absl::InvalidArgumentError(absl::StrCat(
        "this server serves several models: name one in \"model\" (", NameList(), ")"));
  }
  for (const ModelRoute& route : routes_) {
    if (route.description.name == name) return &route;
  }
  return absl::NotFoundError(
      absl::StrCat("the model \"", name, "\" is not served here (served: ", NameList(), ")"));
}

bool ServedModels::KeyAccepted(absl::string_view authorization) const {
  return keys_->Accepts(authorization);
}

absl::Status ServedModels::Admit(absl::string_view authorization,
                                 absl::string_view how_to_send_key) const {
  if (!KeyAccepted(authorization)) return core::Unauthenticated(how_to_send_key);
  if (!accepting()) return core::ShuttingDown();
  return absl::OkStatus();
}

bool ServedModels::accepting() const {
  for (const ModelRoute& route : routes_) {
    if (!route.dispatcher->accepting()) return false;
  }
  return true;
}

void ServedModels::StopAccepting() {
  for (const ModelRoute& route : routes_) route.dispatcher->StopAccepting();
}

}  // namespace server::core
