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

void TurnTakingBackend::AcquireTurn() {
  const auto start = std::chrono::steady_clock::now();
  turns_->Acquire();
  last_wait_ += std::chrono::steady_clock::now() - start;
}

absl::Status TurnTakingBackend::Run(absl::Span<const engine::Sequence> batch,
                                    absl::Span<const OutputSpec> specs,
                                    std::vector<InputOutput>* outputs) {
  last_wait_ = std::chrono::nanoseconds(0);
  int64_t total = 0;
  for (const engine::Sequence& sequence : batch) total += sequence.ids.size();
  if (max_turn_tokens_ <= 0 || total <= max_turn_tokens_) {
    AcquireTurn();
    absl::Status status = backend_->Run(batch, specs, outputs);
    turns_->Release();
    return status;
  }
  outputs->clear();
  std::vector<InputOutput> part;
  size_t begin = 0;
  while (begin < batch.size()) {
    size_t end = begin;
    int64_t tokens = 0;
    while (end < batch.size() &&
           (end == begin ||
            tokens + static_cast<int64_t>(batch[end].ids.size()) <= max_turn_tokens_)) {
      tokens += batch[end].ids.size();
      ++end;
    }
    AcquireTurn();
    absl::Status status =
        backend_->Run(batch.subspan(begin, end - begin), specs.subspan(begin, end - begin), &part);
    turns_->Release();
    if (!status.ok()) return status;
    for (InputOutput& output : part) outputs->push_back(std::move(output));
    begin = end;
  }
  return absl::OkStatus();
}

}  // namespace server
