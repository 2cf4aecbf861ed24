#include "server/encode_dispatcher.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "server/proto_conversions.h"

namespace server {

void EncodeDispatcher::Dispatch(const encoder::v1::EncodeRequest& request,
                                Clock::time_point deadline, std::function<bool()> is_cancelled,
                                encoder::v1::EncodeResponse* response, Done done) {
  if (!accepting_) {
    done(absl::UnavailableError("server is shutting down"));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BatchRequest>> built = builder_->Build(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!built.ok()) {
    done(built.status());
    return;
  }
  std::unique_ptr<BatchRequest> batch_request = *std::move(built);
  batch_request->deadline = deadline;
  batch_request->is_cancelled = std::move(is_cancelled);
  batch_request->done = [response, id = request.id(), pooling = batch_request->spec.pooling,
                         metrics = metrics_,
                         done](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    int64_t tokens = 0;
    for (const InputOutput& output : *outputs) tokens += output.tokens;
    metrics->Encoded(static_cast<int64_t>(outputs->size()), tokens);
    FillEncodeResponse(id, pooling, *outputs, response);
    done(absl::OkStatus());
  };
  // On refusal the batcher never calls the request's `done`: answer here.
  if (absl::Status status = batcher_->Submit(std::move(batch_request)); !status.ok()) {
    done(status);
  }
}

}  // namespace server
