// The path of one EncodeRequest, shared by the unary and the streaming RPC:
// validate and tokenize on the calling gRPC thread, queue on the batcher,
// fill the response when the outputs come back.
#pragma once

#include <atomic>
#include <functional>

#include "absl/status/status.h"
#include "encoder/v1/encoder.pb.h"
#include "server/batcher.h"
#include "server/clock.h"
#include "server/metrics.h"
#include "server/request_builder.h"

namespace server {

class EncodeDispatcher {
 public:
  using Done = std::function<void(absl::Status)>;

  // All pointers must outlive the dispatcher.
  EncodeDispatcher(const RequestBuilder* builder, Batcher* batcher, ServerMetrics* metrics)
      : builder_(builder), batcher_(batcher), metrics_(metrics) {}

  // Calls `done` exactly once: at once (on this thread) when the request is
  // refused, else later from the batcher's thread. `response` must stay valid
  // until then; it is filled only when the status is OK. Keeps no reference
  // to `request` after returning. `is_cancelled` may be empty.
  void Dispatch(const encoder::v1::EncodeRequest& request, Clock::time_point deadline,
                std::function<bool()> is_cancelled, encoder::v1::EncodeResponse* response,
                Done done);

  // From now on every request is refused with UNAVAILABLE.
  void StopAccepting() { accepting_ = false; }
  bool accepting() const { return accepting_; }

 private:
  const RequestBuilder* const builder_;
  Batcher* const batcher_;
  ServerMetrics* const metrics_;
  std::atomic<bool> accepting_{true};
};

}  // namespace server
