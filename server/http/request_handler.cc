#include "server/http/request_handler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/api/refusals.h"

namespace server::http {

RequestHandler::RequestHandler(const HttpOptions& options, const core::ServedModels* models,
                               core::Clock* clock,
                               std::vector<std::weak_ptr<prometheus::Collectable>> collectables,
                               Post post)
    : metrics_(models->first().metrics) {
  context_.options = options;
  context_.models = models;
  context_.clock = clock;
  context_.collectables = std::move(collectables);
  context_.post = std::move(post);
}

Screening RequestHandler::Screen(const std::string& method, const std::string& path,
                                 const std::string& authorization) const {
  Screening screening;
  screening.received = std::chrono::steady_clock::now();
  RouteMatch match = MatchRoute(method, path);
  screening.api = match.api;
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
  if (screening.route->counted && !context_.models->KeyAccepted(authorization)) {
    screening.reply =
        RefuseBody(screening, core::Unauthenticated("the header Authorization: Bearer KEY"));
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
  auto meter = std::make_shared<core::ServerMetrics*>(metrics_);
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
  route->handler(RouteCall(&context_, route, screening.argument, std::move(request),
                           std::move(is_cancelled), std::move(finish), std::move(meter)));
}

}  // namespace server::http
