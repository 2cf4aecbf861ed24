#include "server/core/engine_turns.h"

namespace server {

void EngineTurns::Acquire() {
  common::MutexLock lock(&mu_);
  const uint64_t ticket = next_ticket_++;
  while (serving_ != ticket) turn_changed_.Wait(&mu_);
}

void EngineTurns::Release() {
  {
    common::MutexLock lock(&mu_);
    ++serving_;
  }
  turn_changed_.SignalAll();
}

int64_t EngineTurns::waiting() const {
  common::MutexLock lock(&mu_);
  // Tickets handed out minus the one being served (if any).
  const uint64_t outstanding = next_ticket_ - serving_;
  return outstanding == 0 ? 0 : static_cast<int64_t>(outstanding - 1);
}

absl::Status TurnTakingBackend::Run(absl::Span<const engine::Sequence> batch,
                                    absl::Span<const OutputSpec> specs,
                                    std::vector<InputOutput>* outputs) {
  turns_->Acquire();
  absl::Status status = backend_->Run(batch, specs, outputs);
  turns_->Release();
  return status;
}

}  // namespace server
