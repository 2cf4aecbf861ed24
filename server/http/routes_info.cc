// GET /health, /metrics, /info, /v1/models and /v1/models/{id}.
#include <prometheus/text_serializer.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "common/version.h"
#include "server/core/api/refusals.h"
#include "server/http/json_fields.h"
#include "server/http/json_mapping.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {
namespace {

using Json = nlohmann::json;

// TEI's model_dtype names.
const char* TeiDtype(engine::Precision precision) {
  switch (precision) {
    case engine::Precision::kInt8:
      return "int8";
    case engine::Precision::kBf16:
      return "bfloat16";
    case engine::Precision::kFloat32:
      break;
  }
  return "float32";
}

// TEI's model_type: a classifier, a reranker (one label) or an embedding model.
Json TeiModelType(const core::ModelDescription& model) {
  if (model.labels.empty()) {
    return {{"embedding", {{"pooling", model.pooling_names}}}};
  }
  Json id2label = Json::object();
  Json label2id = Json::object();
  for (size_t i = 0; i < model.labels.size(); ++i) {
    id2label[std::to_string(i)] = model.labels[i];
    label2id[model.labels[i]] = i;
  }
  return {{model.labels.size() == 1 ? "reranker" : "classifier",
           {{"id2label", std::move(id2label)}, {"label2id", std::move(label2id)}}}};
}

// TEI's /info object of one model, with this server's additions
// (sentence_transformers, outputs).
Json TeiInfo(const core::ModelDescription& model, const HttpOptions& options) {
  Json outputs = Json::array({"embeddings"});
  if (model.labels.size() == 1) outputs.push_back("rerank");
  if (!model.labels.empty()) outputs.push_back("classify");
  if (model.sparse) outputs.push_back("sparse");
  if (model.colbert_dimensions > 0) outputs.push_back("colbert");
  return {{"model_id", model.name},
          {"model_sha", nullptr},
          {"model_dtype", TeiDtype(model.precision)},
          {"model_type", TeiModelType(model)},
          {"outputs", std::move(outputs)},
          {"sentence_transformers",
           {{"pooling", model.pooling_names},
            {"embedding_size", model.embedding_size},
            {"normalize", model.normalize},
            {"include_prompt", model.include_prompt},
            {"prompts", model.prompts},
            {"default_prompt_name", model.default_prompt_name}}},
          {"max_concurrent_requests", options.max_connections},
          {"max_input_length", model.max_length},
          {"max_batch_tokens", model.max_batch_tokens},
          {"max_batch_requests", nullptr},
          {"max_client_batch_size", model.max_inputs_per_request},
          {"auto_truncate", model.auto_truncate},
          {"tokenization_workers", options.threads},
          {"version", common::Version()}};
}

// The served models' names; UNAVAILABLE once shutting down.
absl::StatusOr<std::vector<std::string>> ServedNames(const RouteContext& context) {
  if (!context.models->accepting()) return core::ShuttingDown();
  std::vector<std::string> names;
  for (const core::ModelRoute& served : context.models->routes())
    names.push_back(served.description.name);
  return names;
}

}  // namespace

void Health(RouteCall call) {
  const RouteContext& context = call.context();
  if (!call.request().model.empty()) {
    // GET /health?model=NAME: that model (404 for another name).
    absl::StatusOr<const core::ModelRoute*> model = context.models->Resolve(call.request().model);
    if (!model.ok()) return call.Fail(model.status());
  }
  if (!context.serving || !context.models->accepting()) {
    return call.Fail(absl::UnavailableError("the server is not ready or is shutting down"));
  }
  HttpReply reply;
  reply.content_type = nullptr;
  call.Answer(std::move(reply));
}

void Metrics(RouteCall call) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : call.context().collectables) {
    if (auto collectable = weak.lock()) {
      std::vector<prometheus::MetricFamily> collected = collectable->Collect();
      families.insert(families.end(), std::make_move_iterator(collected.begin()),
                      std::make_move_iterator(collected.end()));
    }
  }
  HttpReply reply;
  reply.body = prometheus::TextSerializer().Serialize(families);
  reply.content_type = "text/plain; version=0.0.4";
  call.Answer(std::move(reply));
}

void ListModels(RouteCall call) {
  call.Answer([&]() -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(const std::vector<std::string> names, ServedNames(call.context()));
    return RenderOpenAiModels(names);
  }());
}

void GetModel(RouteCall call) {
  absl::StatusOr<std::vector<std::string>> names = ServedNames(call.context());
  if (!names.ok()) return call.Fail(names.status());
  absl::StatusOr<std::string> model = RenderOpenAiModel(call.argument(), *names);
  // OpenAI's answer to another id.
  if (!model.ok()) return call.Fail(model.status(), 404);
  call.Answer(std::move(model));
}

void Info(RouteCall call) {
  call.Answer([&]() -> absl::StatusOr<std::string> {
    const RouteContext& context = call.context();
    const core::ServedModels& models = *context.models;
    RETURN_IF_ERROR(ServedNames(context).status());
    if (!call.request().model.empty()) {
      ASSIGN_OR_RETURN(const core::ModelRoute* named, models.Resolve(call.request().model));
      return Dump(TeiInfo(named->description, context.options));
    }
    if (models.routes().size() == 1)
      return Dump(TeiInfo(models.first().description, context.options));
    // Several models: {"models": [TEI's object of each], "version": ...}.
    Json list = Json::array();
    for (const core::ModelRoute& served : models.routes()) {
      list.push_back(TeiInfo(served.description, context.options));
    }
    return Dump({{"models", std::move(list)}, {"version", common::Version()}});
  }());
}

}  // namespace server::http::handlers
