// EncodeDispatcher::DispatchWindowed: window mode (server/core/requests/long_inputs.h)
// on the shared queue.
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/requests/long_inputs.h"

namespace server {

void EncodeDispatcher::DispatchWindowed(const core::EncodeRequest& request,
                                        Clock::time_point deadline,
                                        std::function<bool()> is_cancelled, Done done) {
  auto plan = std::make_shared<long_inputs::WindowPlan>();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BatchRequest>> built =
      builder_->BuildWindowed(request, plan.get());
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!built.ok()) {
    done(built.status());
    return;
  }
  std::unique_ptr<BatchRequest> batch_request = *std::move(built);
  batch_request->deadline = deadline;
  batch_request->is_cancelled = std::move(is_cancelled);
  batch_request->done = [pooling = batch_request->spec.pooling, plan, metrics = metrics_,
                         done](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    CountEncoded(metrics, *outputs);  // every window is an input the engine ran
    core::EncodeResult result;
    result.pooling = pooling;
    absl::StatusOr<std::vector<InputOutput>> pooled =
        long_inputs::PoolWindows(*plan, *std::move(outputs), &result.windows);
    if (!pooled.ok()) {
      done(pooled.status());
      return;
    }
    result.outputs = *std::move(pooled);
    done(std::move(result));
  };
  Submit(std::move(batch_request));  // through the result cache when it is on
}

}  // namespace server
