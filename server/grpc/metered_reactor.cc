#include "server/grpc/metered_reactor.h"

#include "server/grpc/status_mapping.h"

namespace server {

MeteredUnaryReactor::MeteredUnaryReactor(grpc::CallbackServerContext* context, core::Rpc rpc,
                                         core::ServerMetrics* metrics)
    : context_(context), rpc_(rpc), metrics_(metrics), received_(std::chrono::steady_clock::now()) {
  metrics_->RequestStarted();
}

void MeteredUnaryReactor::MeterAs(core::ServerMetrics* metrics) {
  metrics_->RequestMovedTo(metrics);
  metrics_ = metrics;
}

void MeteredUnaryReactor::Answer(const grpc::Status& status) {
  code_.store(status.error_code(), std::memory_order_relaxed);
  Finish(status);  // gRPC orders this before OnDone
}

namespace {

// The server's deadline is the client's timeout counted from when the server
// read it, so it falls later than the client's by the request's transit. A
// client whose deadline passes resets the stream (the same reset as a
// cancellation), which can reach the server before the server's own deadline
// does. A cancellation this close to the deadline is the deadline.
constexpr std::chrono::milliseconds kDeadlineTransitSlack{100};

}  // namespace

void MeteredUnaryReactor::OnDone() {
  const auto now = std::chrono::steady_clock::now();
  grpc::StatusCode code = code_.load(std::memory_order_relaxed);
  // The call failed before our status reached the client: the client saw
  // DEADLINE_EXCEEDED when its deadline had passed, else CANCELLED.
  if (context_->IsCancelled()) {
    code = std::chrono::system_clock::now() + kDeadlineTransitSlack >= context_->deadline()
               ? grpc::StatusCode::DEADLINE_EXCEEDED
               : grpc::StatusCode::CANCELLED;
  }
  metrics_->RequestFinished(core::Transport::kGrpc, rpc_, ToAbslCode(code), now - received_);
  delete this;
}

}  // namespace server
