#include "server/core/encode_dispatcher.h"

#include <chrono>
#include <cstdint>
#include <utility>

namespace server {
namespace {

absl::Status ShuttingDown() { return absl::UnavailableError("server is shutting down"); }

}  // namespace

void EncodeDispatcher::Dispatch(const core::EncodeRequest& request, Clock::time_point deadline,
                                std::function<bool()> is_cancelled, Done done) {
  if (!accepting_) {
    done(ShuttingDown());
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
  batch_request->done = [pooling = batch_request->spec.pooling, metrics = metrics_,
                         done](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    int64_t tokens = 0;
    for (const InputOutput& output : *outputs) tokens += output.tokens;
    metrics->Encoded(static_cast<int64_t>(outputs->size()), tokens);
    done(core::EncodeResult{pooling, *std::move(outputs)});
  };
  // On refusal the batcher never calls the request's `done`: answer here.
  if (absl::Status status = batcher_->Submit(std::move(batch_request)); !status.ok()) {
    done(status);
  }
}

absl::StatusOr<engine::Encoding> EncodeDispatcher::Tokenize(const core::TokenizeRequest& request) {
  if (!accepting_) return ShuttingDown();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engine::Encoding> encoding = builder_->Tokenize(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  return encoding;
}

absl::StatusOr<std::string> EncodeDispatcher::Decode(const core::DecodeRequest& request) {
  if (!accepting_) return ShuttingDown();
  return builder_->Decode(request);
}

}  // namespace server
