// The engine's CPU as one resource shared by the served models: each model's
// batcher runs its batches through a TurnTakingBackend, which holds the one
// EngineTurns gate around the engine call. The gate is a FIFO of tickets, so
// models take turns: a batch that starts waiting is run right after the
// batches already waiting (at most one a model, since each model has one
// batcher worker), never after a busy model's whole queue. With one model the
// gate is always free at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/mutex.h"
#include "server/core/backend.h"

namespace server {

class EngineTurns {
 public:
  // Blocks until it is this caller's turn (first come, first served).
  void Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the turn begun by the matching Acquire.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  // Callers blocked in Acquire now (for tests and diagnostics).
  int64_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable common::Mutex mu_;
  common::CondVar turn_changed_;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t serving_ ABSL_GUARDED_BY(mu_) = 0;  // the ticket whose turn it is
};

// One model's backend, run in turns with the other models' (all pointers
// must outlive it). With `max_turn_tokens` > 0 a batch larger than that is
// run in parts of at most that many tokens (at least one input each), one
// turn each, so that another model's batch waits for at most one part of a
// large batch, not all of it; 0: one turn a batch.
class TurnTakingBackend : public Backend {
 public:
  TurnTakingBackend(Backend* backend, EngineTurns* turns, int64_t max_turn_tokens = 0)
      : backend_(backend), turns_(turns), max_turn_tokens_(max_turn_tokens) {}

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override;
  std::chrono::nanoseconds last_turn_wait() const override { return last_wait_; }

 private:
  // Acquire, adding the time it blocked to last_wait_.
  void AcquireTurn();

  Backend* const backend_;
  EngineTurns* const turns_;
  const int64_t max_turn_tokens_;
  std::chrono::nanoseconds last_wait_{0};  // the batcher's thread only
};

}  // namespace server
