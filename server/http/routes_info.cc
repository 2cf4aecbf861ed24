// GET /health, /metrics, /info, /v1/models and /v1/models/{id}.
#include <prometheus/text_serializer.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/version.h"
#include "server/http/json_mapping.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::Health(RouteCall call) {
  HttpReply reply;
  if (serving_ && dispatcher_->accepting()) {
    reply.content_type = nullptr;
  } else {
    reply =
        ErrorReply(absl::UnavailableError("the server is not ready or is shutting down"), call.api);
  }
  call.done(std::move(reply));
}

void RequestHandler::Metrics(RouteCall call) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : collectables_) {
    if (auto collectable = weak.lock()) {
      std::vector<prometheus::MetricFamily> collected = collectable->Collect();
      families.insert(families.end(), std::make_move_iterator(collected.begin()),
                      std::make_move_iterator(collected.end()));
    }
  }
  HttpReply reply;
  reply.body = prometheus::TextSerializer().Serialize(families);
  reply.content_type = "text/plain; version=0.0.4";
  call.done(std::move(reply));
}

void RequestHandler::ModelInfo(RouteCall call) {
  const Api api = call.api;
  if (!dispatcher_->accepting()) {
    return call.done(ErrorReply(absl::UnavailableError("server is shutting down"), api));
  }
  HttpReply reply;
  if (call.route == Route::kModels) {
    reply.body = RenderOpenAiModels(model_.name);
  } else if (call.route == Route::kModel) {
    absl::StatusOr<std::string> model = RenderOpenAiModel(call.argument, model_.name);
    // OpenAI's answer to another id.
    if (!model.ok()) return call.done(ErrorReply(model.status(), api, 404));
    reply.body = *std::move(model);
  } else {
    nlohmann::json info = {{"model_id", model_.name},
                           {"model_sha", nullptr},
                           {"model_dtype", model_.dtype},
                           {"model_type", {{"embedding", {{"pooling", model_.pooling}}}}},
                           {"sentence_transformers",
                            {{"pooling", model_.pooling},
                             {"embedding_size", model_.hidden_size},
                             {"normalize", model_.normalize},
                             {"include_prompt", model_.include_prompt},
                             {"prompts", model_.prompts},
                             {"default_prompt_name", model_.default_prompt_name}}},
                           {"max_concurrent_requests", options_.max_connections},
                           {"max_input_length", model_.max_input_length},
                           {"max_batch_tokens", model_.max_batch_tokens},
                           {"max_batch_requests", nullptr},
                           {"max_client_batch_size", model_.max_inputs_per_request},
                           {"auto_truncate", model_.auto_truncate},
                           {"tokenization_workers", options_.threads},
                           {"version", common::Version()}};
    reply.body = info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  call.done(std::move(reply));
}

}  // namespace server::http
