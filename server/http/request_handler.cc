#include "server/http/request_handler.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>
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

RequestHandler::RequestHandler(const HttpOptions& options, const ServedModels* models, Clock* clock,
                               std::vector<std::weak_ptr<prometheus::Collectable>> collectables,
                               Post post)
    : options_(options),
      models_(models),
      metrics_(models->first().metrics),
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
  if (screening.route->counted && !models_->KeyAccepted(authorization)) {
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
  const Meter meter = std::make_shared<ServerMetrics*>(metrics_);
  // Every answer goes out through here: counted once, when it is ready.
  Reply finish = [meter, route, received = screening.received,
                  done = std::move(done)](HttpReply reply) {
    if (route->counted) {
      (*meter)->RequestFinished(core::Transport::kHttp, route->rpc, reply.code,
                                std::chrono::steady_clock::now() - received);
    }
    done(std::move(reply));
  };
  const Api api = screening.api;
  HttpReply reply;
  switch (route->route) {
    case Route::kHealth: {
      if (!request.model.empty()) {
        // GET /health?model=NAME: that model (404 for another name).
        absl::StatusOr<const ModelRoute*> model = models_->Resolve(request.model);
        if (!model.ok()) {
          reply = ErrorReply(model.status(), api);
          break;
        }
      }
      if (serving_ && models_->accepting()) {
        reply.content_type = nullptr;
      } else {
        reply =
            ErrorReply(absl::UnavailableError("the server is not ready or is shutting down"), api);
      }
      break;
    }
    case Route::kMetrics:
      reply = Metrics();
      break;
    case Route::kModels:
    case Route::kModel:
    case Route::kInfo:
      reply = ModelInfo(route->route, screening.argument, api, request.model);
      break;
    case Route::kDecode:
      reply = Decode(request.body, api, meter);
      break;
    case Route::kTokenize:
      reply = Tokenize(request.body, api, meter);
      break;
    case Route::kEmbeddings:
    case Route::kEmbed:
      Embeddings(route->route, api, std::move(request), std::move(is_cancelled), std::move(finish),
                 meter);
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

absl::StatusOr<const ModelRoute*> RequestHandler::Resolve(const std::string& name, Api api,
                                                          const Meter& meter) const {
  // OpenAI clients hard-code model names: one model serves any.
  const bool any_name = api == Api::kOpenAi && models_->routes().size() == 1;
  absl::StatusOr<const ModelRoute*> route = models_->Resolve(any_name ? "" : name);
  if (route.ok()) {
    (*meter)->RequestMovedTo((*route)->metrics);
    *meter = (*route)->metrics;
  }
  return route;
}

namespace {

// TEI's /info object of one model.
Json TeiInfo(const ModelDescription& model, const HttpOptions& options) {
  return {
      {"model_id", model.name},
      {"model_sha", nullptr},
      {"model_dtype", model.precision == engine::Precision::kInt8 ? "int8" : "float32"},
      {"model_type", {{"embedding", {{"pooling", engine::PoolingName(model.default_pooling)}}}}},
      {"max_concurrent_requests", options.max_connections},
      {"max_input_length", model.max_length},
      {"max_batch_tokens", model.max_batch_tokens},
      {"max_batch_requests", nullptr},
      {"max_client_batch_size", model.max_inputs_per_request},
      {"auto_truncate", model.auto_truncate},
      {"tokenization_workers", options.threads},
      {"version", common::Version()}};
}

}  // namespace

HttpReply RequestHandler::ModelInfo(Route route, const std::string& argument, Api api,
                                    const std::string& model) const {
  if (!models_->accepting()) {
    return ErrorReply(absl::UnavailableError("server is shutting down"), api);
  }
  std::vector<std::string> names;
  for (const ModelRoute& served : models_->routes()) names.push_back(served.description.name);
  HttpReply reply;
  if (route == Route::kModels) {
    reply.body = RenderOpenAiModels(names);
  } else if (route == Route::kModel) {
    absl::StatusOr<std::string> model = RenderOpenAiModel(argument, names);
    if (!model.ok()) return ErrorReply(model.status(), api, 404);  // OpenAI's answer to another id
    reply.body = *std::move(model);
  } else if (!model.empty()) {
    absl::StatusOr<const ModelRoute*> named = models_->Resolve(model);
    if (!named.ok()) return ErrorReply(named.status(), api);
    reply.body = Dump(TeiInfo((*named)->description, options_));
  } else if (models_->routes().size() == 1) {
    reply.body = Dump(TeiInfo(models_->first().description, options_));
  } else {
    // Several models: {"models": [TEI's object of each], "version": ...}.
    Json list = Json::array();
    for (const ModelRoute& served : models_->routes()) {
      list.push_back(TeiInfo(served.description, options_));
    }
    reply.body = Dump({{"models", std::move(list)}, {"version", common::Version()}});
  }
  return reply;
}

HttpReply RequestHandler::Decode(const std::string& body, Api api, const Meter& meter) const {
  bool batched = false;
  std::string name;
  absl::StatusOr<std::vector<core::DecodeRequest>> requests = ParseTeiDecode(body, &batched, &name);
  if (!requests.ok()) return ErrorReply(requests.status(), api);
  absl::StatusOr<const ModelRoute*> model = Resolve(name, api, meter);
  if (!model.ok()) return ErrorReply(model.status(), api);
  Json texts = Json::array();
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<std::string> text = (*model)->dispatcher->Decode((*requests)[i]);
    if (!text.ok())
      return ErrorReply(core::WithInputIndex(static_cast<int>(i), text.status()), api);
    texts.push_back(*std::move(text));
  }
  HttpReply reply;
  reply.body = Dump(batched ? texts : texts[0]);
  return reply;
}

HttpReply RequestHandler::Tokenize(const std::string& body, Api api, const Meter& meter) const {
  std::string name;
  absl::StatusOr<std::vector<core::TokenizeRequest>> requests = ParseTeiTokenize(body, &name);
  if (!requests.ok()) return ErrorReply(requests.status(), api);
  absl::StatusOr<const ModelRoute*> model = Resolve(name, api, meter);
  if (!model.ok()) return ErrorReply(model.status(), api);
  std::vector<engine::Encoding> encodings;
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<engine::Encoding> encoding = (*model)->dispatcher->Tokenize((*requests)[i]);
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
                                std::function<bool()> is_cancelled, Reply done,
                                const Meter& meter) {
  // Parsed before the model is known: "dimensions" is checked against its
  // size below.
  constexpr int kAnySize = std::numeric_limits<int>::max();
  absl::StatusOr<EmbeddingsCall> parsed = route == Route::kEmbed
                                              ? ParseTeiEmbed(request.body, kAnySize)
                                              : ParseOpenAiEmbeddings(request.body, kAnySize);
  if (!parsed.ok()) return done(ErrorReply(parsed.status(), api));
  absl::StatusOr<const ModelRoute*> resolved = Resolve(parsed->model, api, meter);
  if (!resolved.ok()) return done(ErrorReply(resolved.status(), api));
  const ModelRoute& model = **resolved;
  if (absl::Status status = CheckDimensions(parsed->dimensions, model.description.hidden_size);
      !status.ok()) {
    return done(ErrorReply(status, api));
  }
  // One vector per input: a model served without pooling has none.
  if (model.description.default_pooling == engine::Pooling::kNone) {
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
  model.dispatcher->Dispatch(
      call->request, clock_->Now() + timeout, std::move(is_cancelled),
      [this, route, api, call, name = model.description.name,
       done = std::move(done)](absl::StatusOr<core::EncodeResult> result) mutable {
        // Moved out: once answered, the batcher's copy of this callback holds
        // no reference to the connection.
        Reply answer = std::move(done);
        if (!result.ok()) {
          return answer(
              ErrorReply(ForEmbeddingsRoute(result.status(), api, call->input_is_list), api));
        }
        post_([route, call, name, done = std::move(answer), result = *std::move(result)]() {
          HttpReply reply;
          reply.body = route == Route::kEmbed ? RenderTeiEmbed(result, *call)
                                              : RenderOpenAiEmbeddings(result, *call, name);
          done(std::move(reply));
        });
      });
}

}  // namespace server::http
