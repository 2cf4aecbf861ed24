#include "server/http/request_handler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace server::http {
namespace {

// The longest deadline X-Request-Timeout-Ms may set.
constexpr std::chrono::milliseconds kLongestTimeout = std::chrono::hours(24);

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

RequestHandler::RouteHandler RequestHandler::HandlerOf(Route route) {
  // The route table: each route's handler, one file per family (routes_*.cc).
  static constexpr struct {
    Route route;
    RouteHandler handler;
  } kHandlers[] = {
      {Route::kHealth, &RequestHandler::Health},
      {Route::kMetrics, &RequestHandler::Metrics},
      {Route::kModels, &RequestHandler::ModelInfo},
      {Route::kModel, &RequestHandler::ModelInfo},
      {Route::kInfo, &RequestHandler::ModelInfo},
      {Route::kTokenize, &RequestHandler::Tokenize},
      {Route::kDecode, &RequestHandler::Decode},
      {Route::kEmbeddings, &RequestHandler::Embeddings},
      {Route::kEmbed, &RequestHandler::Embed},
      {Route::kEmbedAll, &RequestHandler::EmbedAll},
      {Route::kSimilarity, &RequestHandler::Similarity},
      {Route::kRerank, &RequestHandler::Rerank},
      {Route::kCohereRerank, &RequestHandler::CohereRerank},
      {Route::kPredict, &RequestHandler::Predict},
      {Route::kEmbedSparse, &RequestHandler::EmbedSparse},
      {Route::kEmbedMulti, &RequestHandler::EmbedMulti},
      {Route::kEmbedChunks, &RequestHandler::EmbedChunks},
      {Route::kCohereEmbed, &RequestHandler::CohereEmbed},
  };
  for (const auto& entry : kHandlers) {
    if (entry.route == route) return entry.handler;
  }
  return nullptr;
}

void RequestHandler::Handle(const Screening& screening, HttpRequest request,
                            std::function<bool()> is_cancelled, Reply done) {
  const RouteInfo* route = screening.route;
  if (route->counted) metrics_->RequestStarted();
  auto meter = std::make_shared<ServerMetrics*>(metrics_);
  // Every answer goes out through here: counted once, when it is ready,
  // under the model the request named.
  Reply finish = [meter, route, received = screening.received,
                  done = std::move(done)](HttpReply reply) {
    if (route->counted) {
      (*meter)->RequestFinished(core::Transport::kHttp, route->rpc, reply.code,
                                std::chrono::steady_clock::now() - received);
    }
    done(std::move(reply));
  };
  RouteCall call{route->route,       screening.api,           screening.argument,
                 std::move(request), std::move(is_cancelled), std::move(finish),
                 std::move(meter)};
  const RouteHandler handler = HandlerOf(route->route);
  if (handler == nullptr) {
    return call.done(ErrorReply(absl::InternalError("route without a handler"), call.api));
  }
  (this->*handler)(std::move(call));
}

absl::StatusOr<const ModelRoute*> RequestHandler::Resolve(std::string name,
                                                          const RouteCall& call) const {
  if (name.empty()) name = call.request.model;
  // OpenAI clients hard-code model names: one model serves any.
  const bool any_name = call.api == Api::kOpenAi && models_->routes().size() == 1;
  absl::StatusOr<const ModelRoute*> route = models_->Resolve(any_name ? "" : name);
  if (route.ok() && (*route)->metrics != *call.meter) {
    (*call.meter)->RequestMovedTo((*route)->metrics);
    *call.meter = (*route)->metrics;
  }
  return route;
}

absl::StatusOr<Clock::time_point> RequestHandler::Deadline(const HttpRequest& request) const {
  std::chrono::milliseconds timeout = options_.default_timeout;
  if (request.timeout_ms.has_value()) {
    int64_t ms = 0;
    if (!absl::SimpleAtoi(*request.timeout_ms, &ms) || ms <= 0) {
      return absl::InvalidArgumentError(
          "X-Request-Timeout-Ms must be a positive number of milliseconds");
    }
    // A day at most: a larger value would overflow the clock's time points.
    timeout = std::min(std::chrono::milliseconds(ms), kLongestTimeout);
  }
  return clock_->Now() + timeout;
}

}  // namespace server::http
