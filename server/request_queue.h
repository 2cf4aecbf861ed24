// The batcher's queue: a FIFO of inputs, each pointing back to the request it
// belongs to, with running totals for admission control. Not thread-safe: the
// batcher guards it with its lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "server/backend.h"
#include "server/batcher.h"
#include "server/clock.h"

namespace server {

// A request accepted by the batcher, with the results gathered so far.
struct PendingRequest {
  std::unique_ptr<BatchRequest> request;
  Clock::time_point enqueued;
  // Filled input by input; touched by the worker thread only.
  std::vector<InputOutput> outputs;
  int inputs_left = 0;

  // Whoever answers first (result, error, deadline, shutdown) claims the
  // request; only the claimant calls `done`, so it runs exactly once.
  bool TryClaim() { return !answered_.exchange(true); }
  bool answered() const { return answered_.load(); }

 private:
  std::atomic<bool> answered_{false};
};

// One input waiting for a batch.
struct QueuedInput {
  std::shared_ptr<PendingRequest> owner;
  int index = 0;
  int64_t tokens = 0;
};

class RequestQueue {
 public:
  // Queues all of the request's inputs, in order (so they stay contiguous).
  void Push(std::shared_ptr<PendingRequest> request);

  bool empty() const { return inputs_.empty(); }
  const QueuedInput& front() const { return inputs_.front(); }
  QueuedInput PopFront();

  // Whether the inputs at the front already fill a batch: taking them in
  // order reaches `max_inputs`, or the next one would not fit `max_tokens`.
  bool FillsBatch(int64_t max_tokens, int max_inputs) const;

  // Empties the queue; returns each request that had inputs in it, once.
  std::vector<std::shared_ptr<PendingRequest>> Clear();

  int64_t tokens() const { return tokens_; }
  int64_t requests() const { return requests_; }

 private:
  std::deque<QueuedInput> inputs_;
  int64_t tokens_ = 0;
  int64_t requests_ = 0;  // requests with at least one input queued
};

}  // namespace server
