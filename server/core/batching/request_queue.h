// The batcher's queue: a FIFO of inputs, each pointing back to the request it
// belongs to, with running totals for admission control; and the model of
// what a batch costs, from which the batcher predicts waits. Not thread-safe:
// the batcher guards both with its lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "server/core/batching/backend.h"
#include "server/core/batching/batch_request.h"
#include "server/core/batching/clock.h"

namespace server::core {

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

  // Empties the queue; returns each request that had inputs in it, once.
  std::vector<std::shared_ptr<PendingRequest>> Clear();

  int64_t tokens() const { return tokens_; }
  int64_t requests() const { return requests_; }
  int64_t inputs() const { return static_cast<int64_t>(inputs_.size()); }

 private:
  std::deque<QueuedInput> inputs_;
  int64_t tokens_ = 0;
  int64_t requests_ = 0;  // requests with at least one input queued
};

// What one batch costs the batcher's worker (engine, pooling, answering):
//   time(batch) = fixed + per_token x tokens,
// fitted to the batches run so far by exponentially weighted least squares
// (each batch weighs kDecay times the one after it: about the last 1 / (1 -
// kDecay) batches count). When the recent batches are all about the same size
// (as under overload, when every batch is full) the two terms cannot be told
// apart: the fixed part is kept from the last fit that could, and the slope
// explains the rest (so a machine that slows down shows up per token); before
// any fit, a prediction is the smaller of "all of it fixed" and "all of it
// per token" (see Predict). A batch counts at most kMaxSurprise times what was
// expected of it.
class BatchCostModel {
 public:
  static constexpr double kDecay = 0.9;
  static constexpr double kMaxSurprise = 4;

  void Observe(int64_t tokens, Clock::duration time);
  // Whether any batch was observed; before that, every prediction is zero.
  bool known() const { return weight_ > 0; }
  // Expected time of `batches` batches holding `tokens` tokens in all.
  Clock::duration Predict(int64_t batches, int64_t tokens) const;

  double fixed_seconds() const { return fixed_; }
  double per_token_seconds() const { return per_token_; }

 private:
  double weight_ = 0;  // exponentially weighted sums over batches
  double sum_x_ = 0, sum_y_ = 0, sum_xx_ = 0, sum_xy_ = 0;
  double fixed_ = 0;      // seconds per batch
  double per_token_ = 0;  // seconds per token
  bool fitted_ = false;   // both terms were told apart at least once
  // Before the first fit: the recent batches' mean time per token.
  double mean_per_token_ = 0;
};

}  // namespace server::core
