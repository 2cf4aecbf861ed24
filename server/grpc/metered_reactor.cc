#include "server/grpc/metered_reactor.h"

#include "server/grpc/status_mapping.h"

namespace server {

MeteredUnaryReactor::MeteredUnaryReactor(grpc::CallbackServerContext* context, Rpc rpc,
                                         ServerMetrics* metrics)
    : context_(context), rpc_(rpc), metrics_(metrics), received_(std::chrono::steady_clock::now()) {
  metrics_->RequestStarted();
}

void MeteredUnaryReactor::MeterAs(ServerMetrics* metrics) {
  metrics_->RequestMovedTo(metrics);
  metrics_ = metrics;
}

void MeteredUnaryReactor::Answer(const grpc::Status& status) {
  code_.store(status.error_code(), std::memory_order_relaxed);
  Finish(status);  // gRPC orders this before OnDone
}

void MeteredUnaryReactor::OnDone() {
  const auto now = std::chrono::steady_clock::now();
  grpc::StatusCode code = code_.load(std::memory_order_relaxed);
  // The call failed before our status reached the client: the client saw
  // DEADLINE_EXCEEDED when its deadline had passed, else CANCELLED.
  if (context_->IsCancelled()) {
    code = std::chrono::system_clock::now() >= context_->deadline()
               ? grpc::StatusCode::DEADLINE_EXCEEDED
               : grpc::StatusCode::CANCELLED;
  }
  metrics_->RequestFinished(core::Transport::kGrpc, rpc_, ToAbslCode(code), now - received_);
  delete this;
}

}  // namespace server
