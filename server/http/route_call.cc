#include "server/http/route_call.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "common/status_macros.h"

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

void RouteCall::Answer(HttpReply reply) {
  Reply answer = std::move(done_);
  answer(std::move(reply));
}

void RouteCall::Answer(absl::StatusOr<std::string> body) {
  if (!body.ok()) return Fail(body.status());
  HttpReply reply;
  reply.body = *std::move(body);
  Answer(std::move(reply));
}

absl::StatusOr<const core::ModelRoute*> RouteCall::Resolve(std::string name) {
  if (name.empty()) name = request_.model;
  const core::ServedModels& models = *context_->models;
  // OpenAI's and Cohere's clients hard-code model names: one model serves any.
  const bool any_name =
      (api() == Api::kOpenAi || api() == Api::kCohere) && models.routes().size() == 1;
  ASSIGN_OR_RETURN(const core::ModelRoute* route, models.Resolve(any_name ? "" : name));
  if (route->metrics != *meter_) {
    (*meter_)->RequestMovedTo(route->metrics);
    *meter_ = route->metrics;
  }
  return route;
}

absl::StatusOr<core::Clock::time_point> RouteCall::Deadline() const {
  std::chrono::milliseconds timeout = context_->options.default_timeout;
  if (request_.timeout_ms.has_value()) {
    int64_t ms = 0;
    if (!absl::SimpleAtoi(*request_.timeout_ms, &ms) || ms <= 0) {
      return absl::InvalidArgumentError(
          "X-Request-Timeout-Ms must be a positive number of milliseconds");
    }
    // A day at most: a larger value would overflow the clock's time points.
    timeout = std::min(std::chrono::milliseconds(ms), kLongestTimeout);
  }
  return context_->clock->Now() + timeout;
}

}  // namespace server::http
