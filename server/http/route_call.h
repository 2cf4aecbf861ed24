// What a route handler gets: one screened request, whole, what every route
// shares (options, the served models, the clock, the handler threads), and
// where the request's one answer goes (counted there, under the model the
// request named). Socket-free; made by RequestHandler::Handle.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/batching/clock.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/http/http_errors.h"
#include "server/http/http_message.h"
#include "server/http/http_options.h"
#include "server/http/routes.h"

namespace server::http {

// An error reply in `api`'s shape (the HTTP status from the error's code
// unless given), counted as the error's code.
HttpReply ErrorReply(const absl::Status& status, Api api, int http_status = 0);

// What every route's calls share; owned by RequestHandler.
struct RouteContext {
  using Reply = std::function<void(HttpReply)>;
  // Runs a piece of work on the handler threads (rendering an answer that the
  // batcher's thread delivered).
  using Post = std::function<void(std::function<void()>)>;

  HttpOptions options;
  const core::ServedModels* models = nullptr;
  core::Clock* clock = nullptr;
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables;  // what GET /metrics exports
  Post post;
  std::atomic<bool> serving{true};  // /health: 200 while serving
};

class RouteCall {
 public:
  using Reply = RouteContext::Reply;

  // `done` counts the answer under *meter (the first model's until Resolve).
  RouteCall(const RouteContext* context, const RouteInfo* route, std::string argument,
            HttpRequest request, std::function<bool()> is_cancelled, Reply done,
            std::shared_ptr<core::ServerMetrics*> meter)
      : context_(context),
        route_(route),
        argument_(std::move(argument)),
        request_(std::move(request)),
        is_cancelled_(std::move(is_cancelled)),
        done_(std::move(done)),
        meter_(std::move(meter)) {}

  const RouteContext& context() const { return *context_; }
  Api api() const { return route_->api; }
  const std::string& argument() const { return argument_; }  // a prefix route's rest of the path
  const HttpRequest& request() const { return request_; }

  // Answers now.
  void Answer(HttpReply reply);
  // Answers `body` (JSON) with 200, or the error in the route's shape.
  void Answer(absl::StatusOr<std::string> body);
  void Fail(const absl::Status& status, int http_status = 0) {
    Answer(ErrorReply(status, api(), http_status));
  }

  // The model `name` names (the JSON body's "model", else the query's
  // ?model=; with one model served, OpenAI's and Cohere's clients may name
  // anything, as they hard-code names), counting this call from now on.
  absl::StatusOr<const core::ModelRoute*> Resolve(std::string name);
  // The call's deadline from X-Request-Timeout-Ms, else the default timeout.
  absl::StatusOr<core::Clock::time_point> Deadline() const;

  // What the core polls before it computes the request (the client left).
  std::function<bool()> TakeCancelled() { return std::move(is_cancelled_); }

  // The callback of a core call, which takes this call's answer: an error is
  // answered at once, on the calling thread (the batcher's), in the route's
  // shape, an input's error as ForEmbeddingsRoute says it when `inputs_listed`
  // is set (whether the inputs came as a list); a result is rendered and
  // answered on the handler threads, so that the batcher goes on at once.
  // `windows`, when given, renders the X-Windows header.
  template <typename Result>
  std::function<void(absl::StatusOr<Result>)> AnswerLater(
      std::function<std::string(const Result&)> render, std::optional<bool> inputs_listed,
      std::function<std::string(const Result&)> windows = nullptr);

 private:
  const RouteContext* context_;
  const RouteInfo* route_;
  std::string argument_;
  HttpRequest request_;
  std::function<bool()> is_cancelled_;
  Reply done_;
  std::shared_ptr<core::ServerMetrics*> meter_;
};

template <typename Result>
std::function<void(absl::StatusOr<Result>)> RouteCall::AnswerLater(
    std::function<std::string(const Result&)> render, std::optional<bool> inputs_listed,
    std::function<std::string(const Result&)> windows) {
  return [post = context_->post, api = api(), inputs_listed, done = std::move(done_),
          render = std::move(render),
          windows = std::move(windows)](absl::StatusOr<Result> result) mutable {
    // Moved out: once answered, the batcher's copy of the callback holds no
    // reference to the connection.
    Reply answer = std::move(done);
    // An error becomes its reply here: an absl::Status must not cross
    // threads, as its shared payloads are counted in uninstrumented Abseil
    // code that ThreadSanitizer cannot see.
    if (!result.ok()) {
      return answer(ErrorReply(inputs_listed.has_value()
                                   ? ForEmbeddingsRoute(result.status(), api, *inputs_listed)
                                   : result.status(),
                               api));
    }
    post([answer = std::move(answer), render = std::move(render), windows = std::move(windows),
          result = *std::move(result)]() {
      HttpReply reply;
      reply.body = render(result);
      if (windows) reply.windows = windows(result);
      answer(std::move(reply));
    });
  };
}

}  // namespace server::http
