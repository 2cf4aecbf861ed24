#include "server/http/request_handler.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "server/core/input_error.h"
#include "server/http/json_mapping.h"

namespace server::http {
namespace {

using Json = nlohmann::json;

// The longest deadline X-Request-Timeout-Ms may set.
constexpr std::chrono::milliseconds kLongestTimeout = std::chrono::hours(24);

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

HttpReply ErrorReply(const absl::Status& status, Api api, int http_status) {
  if (http_status == 0) http_status = HttpStatusFor(status, api);
  HttpReply reply;
  reply.status = http_status;
  reply.body = ErrorBody(status, http_status, api);
  reply.code = status.code();
  return reply;
}

RequestHandler::RequestHandler(const HttpOptions& options, HttpModelInfo model,
                               EncodeDispatcher* dispatcher, ServerMetrics* metrics,
                               const ApiKeys* keys, Clock* clock,
                               std::vector<std::weak_ptr<prometheus::Collectable>> collectables,
                               Post post)
    : options_(options),
      model_(std::move(model)),
      dispatcher_(dispatcher),
      metrics_(metrics),
      keys_(keys),
      clock_(clock),
      collectables_(std::move(collectables)),
      post_(std::move(post)) {}

Screening RequestHandler::Screen(const std::string& method, const std::string& path,
                                 const std::string& authorization) const {
  Screening screening;
  screening.received = std::chrono::steady_clock::now();
  screening.api = ApiOfPath(path);
  RouteMatch match = MatchRoute(method, path);
  if (match.outcome != RouteMatch::Outcome::kFound) {
    // The body is not read: close rather than parse it as the next request.
    HttpReply reply;
    if (match.outcome == RouteMatch::Outcome::kWrongMethod) {
      reply = ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                             method, " is not allowed on ", path, " (allowed: ", match.allow, ")")),
                         screening.api, 405);
      reply.allow = match.allow;
    } else {
      reply = ErrorReply(absl::NotFoundError(absl::StrCat("no route ", method, " ", path)),
                         screening.api);
    }
    reply.close = true;
    screening.reply = std::move(reply);
    return screening;
  }
  screening.route = match.route;
  screening.argument = std::move(match.argument);
  if (screening.route->counted && !keys_->Accepts(authorization)) {
    screening.reply = RefuseBody(
        screening, absl::UnauthenticatedError(
                       "a valid API key is needed: send the header Authorization: Bearer KEY"));
    screening.route = nullptr;
  }
  return screening;
}

HttpReply RequestHandler::RefuseBody(const Screening& screening, const absl::Status& status,
                                     int http_status) const {
  HttpReply reply = ErrorReply(status, screening.api, http_status);
  reply.close = true;
  if (screening.route != nullptr && screening.route->counted) {
    metrics_->RequestStarted();
    metrics_->RequestFinished(core::Transport::kHttp, screening.route->rpc, status.code(),
                              std::chrono::steady_clock::now() - screening.received);
  }
  return reply;
}

void RequestHandler::Handle(const Screening& screening, HttpRequest request,
                            std::function<bool()> is_cancelled, Reply done) {
  const RouteInfo* route = screening.route;
  if (route->counted) metrics_->RequestStarted();
  // Every answer goes out through here: counted once, when it is ready.
  Reply finish = [this, route, received = screening.received,
                  done = std::move(done)](HttpReply reply) {
    if (route->counted) {
      metrics_->RequestFinished(core::Transport::kHttp, route->rpc, reply.code,
                                std::chrono::steady_clock::now() - received);
    }
    done(std::move(reply));
  };
  const Api api = screening.api;
  HttpReply reply;
  switch (route->route) {
    case Route::kHealth:
      if (serving_ && dispatcher_->accepting()) {
        reply.content_type = nullptr;
      } else {
        reply =
            ErrorReply(absl::UnavailableError("the server is not ready or is shutting down"), api);
      }
      break;
    case Route::kMetrics:
      reply = Metrics();
      break;
    case Route::kModels:
    case Route::kModel:
    case Route::kInfo:
      reply = ModelInfo(route->route, screening.argument, api);
      break;
    case Route::kDecode:
      reply = Decode(request.body, api);
      break;
    case Route::kTokenize:
      reply = Tokenize(request.body, api);
      break;
    case Route::kEmbeddings:
    case Route::kEmbed:
      Embeddings(route->route, api, std::move(request), std::move(is_cancelled), std::move(finish));
      return;
  }
  finish(std::move(reply));
}

HttpReply RequestHandler::Metrics() const {
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
  return reply;
}

HttpReply RequestHandler::ModelInfo(Route route, const std::string& argument, Api api) const {
  if (!dispatcher_->accepting()) {
    return ErrorReply(absl::UnavailableError("server is shutting down"), api);
  }
  HttpReply reply;
  if (route == Route::kModels) {
    reply.body = RenderOpenAiModels(model_.name);
  } else if (route == Route::kModel) {
    absl::StatusOr<std::string> model = RenderOpenAiModel(argument, model_.name);
    if (!model.ok()) return ErrorReply(model.status(), api, 404);  // OpenAI's answer to another id
    reply.body = *std::move(model);
  } else {
    reply.body = Dump({{"model_id", model_.name},
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
                       {"version", common::Version()}});
  }
  return reply;
}

HttpReply RequestHandler::Decode(const std::string& body, Api api) const {
  bool batched = false;
  absl::StatusOr<std::vector<core::DecodeRequest>> requests = ParseTeiDecode(body, &batched);
  if (!requests.ok()) return ErrorReply(requests.status(), api);
  Json texts = Json::array();
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<std::string> text = dispatcher_->Decode((*requests)[i]);
    if (!text.ok())
      return ErrorReply(core::WithInputIndex(static_cast<int>(i), text.status()), api);
    texts.push_back(*std::move(text));
  }
  HttpReply reply;
  reply.body = Dump(batched ? texts : texts[0]);
  return reply;
}

HttpReply RequestHandler::Tokenize(const std::string& body, Api api) const {
  absl::StatusOr<std::vector<core::TokenizeRequest>> requests = ParseTeiTokenize(body);
  if (!requests.ok()) return ErrorReply(requests.status(), api);
  std::vector<engine::Encoding> encodings;
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<engine::Encoding> encoding = dispatcher_->Tokenize((*requests)[i]);
    if (!encoding.ok()) {
      return ErrorReply(core::WithInputIndex(static_cast<int>(i), encoding.status()), api);
    }
    encodings.push_back(*std::move(encoding));
  }
  HttpReply reply;
  reply.body = RenderTeiTokenize(encodings);
  return reply;
}

void RequestHandler::Embeddings(Route route, Api api, HttpRequest request,
                                std::function<bool()> is_cancelled, Reply done) {
  absl::StatusOr<EmbeddingsCall> parsed =
      route == Route::kEmbed ? ParseTeiEmbed(request.body, model_.hidden_size)
                             : ParseOpenAiEmbeddings(request.body, model_.hidden_size);
  if (!parsed.ok()) return done(ErrorReply(parsed.status(), api));
  // One vector per input: a model served without pooling has none.
  if (model_.pooling == "none") {
    return done(
        ErrorReply(absl::InvalidArgumentError("this model's pooling is none (token states): no "
                                              "embedding per input over HTTP"),
                   api));
  }
  std::chrono::milliseconds timeout = options_.default_timeout;
  if (request.timeout_ms.has_value()) {
    int64_t ms = 0;
    if (!absl::SimpleAtoi(*request.timeout_ms, &ms) || ms <= 0) {
      return done(ErrorReply(absl::InvalidArgumentError(
                                 "X-Request-Timeout-Ms must be a positive number of milliseconds"),
                             api));
    }
    // A day at most: a larger value would overflow the clock's time points.
    timeout = std::min(std::chrono::milliseconds(ms), kLongestTimeout);
  }
  auto call = std::make_shared<EmbeddingsCall>(*std::move(parsed));
  // The answer comes on the batcher's thread (or this one, when refused). An
  // error becomes its reply there: an absl::Status must not cross threads,
  // as its shared payloads are counted in uninstrumented Abseil code that
  // ThreadSanitizer cannot see. Rendering every vector as JSON goes to the
  // handler threads, so that the batcher goes on at once.
  dispatcher_->Dispatch(
      call->request, clock_->Now() + timeout, std::move(is_cancelled),
      [this, route, api, call,
       done = std::move(done)](absl::StatusOr<core::EncodeResult> result) mutable {
        // Moved out: once answered, the batcher's copy of this callback holds
        // no reference to the connection.
        Reply answer = std::move(done);
        if (!result.ok()) {
          return answer(
              ErrorReply(ForEmbeddingsRoute(result.status(), api, call->input_is_list), api));
        }
        post_([this, route, call, done = std::move(answer), result = *std::move(result)]() {
          HttpReply reply;
          reply.body = route == Route::kEmbed ? RenderTeiEmbed(result, *call)
                                              : RenderOpenAiEmbeddings(result, *call, model_.name);
          done(std::move(reply));
        });
      });
}

}  // namespace server::http
