// The engine's CPU as one resource shared by the served models: each model's
// batcher runs its batches through a TurnTakingBackend, which holds the one
// EngineTurns gate around the engine call. The gate is a FIFO of tickets, so
// models take turns: a batch that starts waiting is run right after the
// batches already waiting (at most one a model, since each model has one
// batcher worker), never after a busy model's whole queue. With one model the
// gate is always free at once.
//
// Turns are also cut between two layers of the engine's pass: the shortest
// remaining work first, preemptively at layer boundaries. When a waiting
// batch is expected to take less engine time than the running batch still
// needs, the running batch queues behind it and resumes after
// (YieldToWaiting). So a quiet model's small batch waits for one layer of a
// busy model's large batch, not for the whole of it, and the large batch,
// resumed, does not cut back into the small one. Shortest-remaining-first is
// the order that minimizes mean latency; it cannot starve a model, because a
// model kept waiting gathers a larger batch while others run (the batcher),
// which makes its next batch the longer one only until the others' grow too.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/clock.h"

namespace server::core {

class EngineTurns {
 public:
  explicit EngineTurns(Clock* clock = SystemClock()) : clock_(clock) {}

  // Blocks until it is this caller's turn (first come, first served).
  // `owner` is a model's backend (may be null); `expected` is the engine
  // time the caller expects its turn to take (0: unknown, which counts as
  // short).
  void Acquire(const void* owner = nullptr, Clock::duration expected = {}) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the turn begun by the matching Acquire.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  // Called by the turn's holder `owner` between two layers with the engine
  // time its batch still needs: when a caller of another owner is waiting
  // whose expected time is less, ends this turn, waits for the turns queued
  // before it (`remaining` is its expected time meanwhile) and takes the
  // turn again. Returns whether it yielded.
  bool YieldToWaiting(const void* owner, Clock::duration remaining) ABSL_LOCKS_EXCLUDED(mu_);
  // Callers blocked in Acquire or in a yield now (for tests and diagnostics).
  int64_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  Clock* clock() const { return clock_; }

 private:
  struct Waiting {
    const void* owner;
    Clock::duration expected;
  };

  // With mu_ held: ends the current turn / waits for `ticket`'s.
  void EndTurn() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AwaitTurn(uint64_t ticket, Waiting waiting) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  mutable common::Mutex mu_;
  common::CondVar turn_changed_;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t serving_ ABSL_GUARDED_BY(mu_) = 0;  // the ticket whose turn it is
  // The callers blocked in AwaitTurn now, by ticket.
  std::vector<std::pair<uint64_t, Waiting>> waiting_ ABSL_GUARDED_BY(mu_);
};

// One model's backend, run in turns with the other models' (all pointers
// must outlive it). Its engine's passes yield between layers to shorter
// waiting batches (EngineTurns::YieldToWaiting); the engine time a batch
// needs is estimated from the model's last batches (time per token), and
// what a running batch still needs from its own layers so far. With
// `max_turn_tokens` > 0 a batch larger than that is run in parts of at most
// that many tokens (at least one input each), one turn each, which bounds a
// layer's time; 0: one turn a batch.
class TurnTakingBackend : public Backend {
 public:
  TurnTakingBackend(Backend* backend, EngineTurns* turns, int64_t max_turn_tokens = 0);

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override;
  std::chrono::nanoseconds last_turn_wait() const override { return last_wait_; }

 private:
  // Runs one part in one turn (which its layers may yield).
  absl::Status RunPart(absl::Span<const engine::Sequence> part, absl::Span<const OutputSpec> specs,
                       int64_t tokens, std::vector<InputOutput>* outputs);
  // The engine's between-layers call: YieldToWaiting with the time the part
  // still needs, the time it gave away added to last_wait_ and left out of
  // the part's engine time.
  void BetweenLayers(int layers_done, int layers);

  Backend* const backend_;
  EngineTurns* const turns_;
  const int64_t max_turn_tokens_;
  // The batcher's thread only:
  std::chrono::nanoseconds last_wait_{0};
  double seconds_per_token_ = 0;  // engine time, a moving average over parts
  Clock::time_point part_start_{};
  Clock::duration part_yielded_{};  // of the part in progress
};

}  // namespace server::core
