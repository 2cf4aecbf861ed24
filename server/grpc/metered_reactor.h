// The reactor of every unary call: reports the call to the metrics once gRPC
// is done with it, i.e. after the response and status were sent (or the call
// failed), with the time since the handler received the request and the code
// the client got. Frees itself.
#pragma once

#include <atomic>
#include <chrono>

#include <grpcpp/grpcpp.h>

#include "server/core/metrics/metrics.h"

namespace server {

class MeteredUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  // Counts the call as in flight from now. `metrics` must outlive the call.
  MeteredUnaryReactor(grpc::CallbackServerContext* context, core::Rpc rpc,
                      core::ServerMetrics* metrics);

  // Finishes the call (once, from any thread). Use this, not Finish, so the
  // code is recorded.
  void Answer(const grpc::Status& status);
  // The call turned out to be for the model of `metrics` (before Answer, on
  // the handler's thread).
  void MeterAs(core::ServerMetrics* metrics);

  void OnDone() override;

 private:
  grpc::CallbackServerContext* const context_;
  const core::Rpc rpc_;
  core::ServerMetrics* metrics_;
  const std::chrono::steady_clock::time_point received_;
  std::atomic<grpc::StatusCode> code_{grpc::StatusCode::OK};
};

}  // namespace server
