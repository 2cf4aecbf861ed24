// EncodeDispatcher::DispatchChunks: late chunking on the shared queue.
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/requests/late_chunking.h"

namespace server {

void EncodeDispatcher::DispatchChunks(const core::ChunksRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, ChunksDone done) {
  if (!accepting_) {
    done(absl::UnavailableError("server is shutting down"));
    return;
  }
  const LoadedModel* model = &builder_->model();
  auto batch_request = std::make_unique<BatchRequest>();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<chunking::ChunkPlan> planned =
      chunking::PlanChunks(*model, builder_->limits(), request, &batch_request->inputs);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!planned.ok()) {
    done(planned.status());
    return;
  }
  auto plan = std::make_shared<const chunking::ChunkPlan>(*std::move(planned));
  // Every token state of every window, as they are.
  batch_request->spec.pooling = engine::Pooling::kNone;
  batch_request->spec.normalize = false;
  batch_request->deadline = deadline;
  batch_request->is_cancelled = std::move(is_cancelled);
  batch_request->done = [model, plan, metrics = metrics_,
                         done](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    CountEncoded(metrics, *outputs);
    done(chunking::PoolChunks(*model, *plan, *outputs));
  };
  Submit(std::move(batch_request));
}

}  // namespace server
