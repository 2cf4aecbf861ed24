// Dynamic batcher: one bounded queue for all RPCs and one worker thread that
// packs queued requests into engine batches under a token budget, an input
// cap and a queue delay, then scatters results back. Knows nothing of gRPC.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/backend.h"
#include "server/clock.h"

namespace server {

struct BatcherConfig {
  int64_t max_batch_tokens = 16384;  // real (unpadded) tokens per engine batch
  int max_batch_inputs = 256;        // inputs per engine batch
  std::chrono::microseconds max_queue_delay{2000};  // how long the oldest request waits for company
  int64_t max_queue_tokens = 65536;  // admission bound: beyond it a new request is refused
};

// One tokenized input, owned by the request.
struct TokenizedInput {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;  // empty: all zero
};

// Observations the batcher reports (the metrics issue hooks these up).
struct BatcherObserver {
  virtual ~BatcherObserver() = default;
  virtual void OnQueueChanged(int64_t /*requests*/, int64_t /*tokens*/) {}
  virtual void OnRequestDequeued(Clock::duration /*queue_time*/) {}
  virtual void OnBatchDone(int /*inputs*/, int64_t /*tokens*/, Clock::duration /*engine_time*/) {}
};

// A request: all its inputs are computed in one batch (a request is never split).
struct BatchRequest {
  std::vector<TokenizedInput> inputs;
  OutputSpec spec;
  Clock::time_point deadline = Clock::time_point::max();
  // Polled before compute; a cancelled request is dropped (answered CANCELLED).
  std::function<bool()> is_cancelled;
  // Called exactly once, from the worker thread (or from Submit's caller
  // when admission fails synchronously is NOT used: Submit returns the error
  // instead and `done` is never called).
  std::function<void(absl::StatusOr<std::vector<InputOutput>>)> done;
};

class Batcher {
 public:
  Batcher(BatcherConfig config, Backend* backend, Clock* clock,
          BatcherObserver* observer = nullptr);
  ~Batcher();  // Shutdown() then joins the worker.

  void Start();

  // Queues a request. Returns RESOURCE_EXHAUSTED at once when queued tokens
  // would exceed max_queue_tokens, INVALID_ARGUMENT when the request alone
  // exceeds max_batch_tokens or max_batch_inputs, UNAVAILABLE after
  // Shutdown. On error `done` is not called. Thread-safe.
  absl::Status Submit(std::unique_ptr<BatchRequest> request);

  // Stops accepting; queued and running work still completes. Thread-safe.
  void Shutdown();
  // Waits until the queue is empty and no batch runs, or `timeout` passes;
  // returns whether it drained. Requests still queued at the timeout are
  // answered UNAVAILABLE.
  bool Drain(Clock::duration timeout);

  int64_t queued_requests() const;
  int64_t queued_tokens() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace server
