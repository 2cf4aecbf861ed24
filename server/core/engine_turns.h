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
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "server/core/backend.h"

namespace server {

class EngineTurns {
 public:
  // Blocks until it is this caller's turn (first come, first served).
  // `owner` (a model's backend; may be null) is remembered for
  // LastTurnEndedByAnother.
  void Acquire(const void* owner = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the turn begun by the matching Acquire.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  // Callers blocked in Acquire now (for tests and diagnostics).
  int64_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  // When a turn of an owner other than `owner` last ended; the clock's
  // epoch if none has.
  std::chrono::steady_clock::time_point LastTurnEndedByAnother(const void* owner) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable common::Mutex mu_;
  common::CondVar turn_changed_;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t serving_ ABSL_GUARDED_BY(mu_) = 0;  // the ticket whose turn it is
  const void* holder_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Each owner's last turn's end (one entry a model).
  std::vector<std::pair<const void*, std::chrono::steady_clock::time_point>> last_ends_
      ABSL_GUARDED_BY(mu_);
};

// One model's backend, run in turns with the other models' (all pointers
// must outlive it). With `max_turn_tokens` > 0 a batch larger than that is
// run in parts of at most that many tokens (at least one input each), one
// turn each, so that another model's batch waits for at most one part of a
// large batch, not all of it; 0: one turn a batch. With
// `shared_turn_tokens` > 0, parts are at most that many tokens while another
// model is active (a turn of its ended within `recent`): small parts cost
// throughput, so they are cut only while another model needs the engine
// (bench/README.md, "Several models").
class TurnTakingBackend : public Backend {
 public:
  TurnTakingBackend(Backend* backend, EngineTurns* turns, int64_t max_turn_tokens = 0,
                    int64_t shared_turn_tokens = 0,
                    std::chrono::nanoseconds recent = std::chrono::milliseconds(100))
      : backend_(backend),
        turns_(turns),
        max_turn_tokens_(max_turn_tokens),
        shared_turn_tokens_(shared_turn_tokens),
        recent_(recent) {}

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override;
  std::chrono::nanoseconds last_turn_wait() const override { return last_wait_; }

 private:
  // Acquire, adding the time it blocked to last_wait_.
  void AcquireTurn();
  // The most tokens of the next part: max_turn_tokens_, or shared_turn_tokens_
  // while another model is active; 0: no limit.
  int64_t PartTokens() const;

  Backend* const backend_;
  EngineTurns* const turns_;
  const int64_t max_turn_tokens_;
  const int64_t shared_turn_tokens_;
  const std::chrono::nanoseconds recent_;
  std::chrono::nanoseconds last_wait_{0};  // the batcher's thread only
};

}  // namespace server
