// What the batcher takes and how it is bounded: one tokenized request (its
// inputs, their output spec, deadline, cancellation and answer), the
// batcher's limits and the observer of its queue. The queue and the request
// builders need these types, not the batcher itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/clock.h"

namespace server::core {

struct BatcherConfig {
  int64_t max_batch_tokens = 16384;  // real (unpadded) tokens per engine batch
  int max_batch_inputs = 256;        // inputs per engine batch
  int64_t max_queue_tokens = 65536;  // admission bound: beyond it a new request is refused
  // Time kept in reserve before each deadline for sending the answer: a
  // request is admitted (and computed) only if it is expected to finish this
  // long before its deadline.
  std::chrono::microseconds deadline_margin{5000};
  // Admission counts the queue's expected wait this many times over, so that
  // queued work leaves room for estimation error before the deadline.
  double queue_wait_headroom = 2.0;
};

// One tokenized input, owned by the request.
struct TokenizedInput {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;  // empty: all zero
  int visible_keys = 0;  // engine::Sequence::visible_keys (ColBERT's query expansion)
};

// Observations the batcher reports (the metrics issue hooks these up).
// Called from the batcher's threads, sometimes under its lock: keep them cheap
// and never call back into the batcher.
struct BatcherObserver {
  virtual ~BatcherObserver() = default;
  virtual void OnQueueChanged(int64_t /*requests*/, int64_t /*tokens*/) {}
  // When a request's first input leaves the queue for a batch.
  virtual void OnRequestDequeued(Clock::duration /*queue_time*/) {}
  virtual void OnBatchDone(int /*inputs*/, int64_t /*tokens*/, Clock::duration /*engine_time*/) {}
};

struct BatchRequest {
  std::vector<TokenizedInput> inputs;
  OutputSpec spec;
  // On the batcher's clock. Checked at Submit (RESOURCE_EXHAUSTED when the
  // queue's expected wait and its own compute would pass it) and before
  // compute: a request whose deadline has passed, or would pass before its
  // batch is expected to end, is answered DEADLINE_EXCEEDED and its remaining
  // inputs skipped.
  Clock::time_point deadline = Clock::time_point::max();
  // Optional; polled before compute. A cancelled request is answered
  // CANCELLED and its remaining inputs skipped. Never called after `done`.
  std::function<bool()> is_cancelled;
  // Called exactly once per accepted request, with one output per input in
  // input order, or with the first error. Results and engine errors run on
  // the worker thread; requests dropped from the queue (deadline, cancelled)
  // on the batcher's answering thread; those left at a Drain timeout on the
  // thread of Drain. Never under the batcher's lock. When Submit returns an
  // error, `done` is never called.
  std::function<void(absl::StatusOr<std::vector<InputOutput>>)> done;
};

}  // namespace server::core
