#include "server/core/engine_turns.h"

#include <algorithm>

namespace server {

void EngineTurns::Acquire(const void* owner) {
  common::MutexLock lock(&mu_);
  const uint64_t ticket = next_ticket_++;
  while (serving_ != ticket) turn_changed_.Wait(&mu_);
  holder_ = owner;
}

void EngineTurns::Release() {
  {
    common::MutexLock lock(&mu_);
    const auto now = std::chrono::steady_clock::now();
    const void* const holder = holder_;
    auto entry = std::find_if(last_ends_.begin(), last_ends_.end(),
                              [holder](const auto& e) { return e.first == holder; });
    if (entry == last_ends_.end()) {
      last_ends_.emplace_back(holder, now);
    } else {
      entry->second = now;
    }
    ++serving_;
  }
  turn_changed_.SignalAll();
}

std::chrono::steady_clock::time_point EngineTurns::LastTurnEndedByAnother(const void* owner) const {
  common::MutexLock lock(&mu_);
  std::chrono::steady_clock::time_point last{};
  for (const auto& [other, end] : last_ends_) {
    if (other != owner) last = std::max(last, end);
  }
  return last;
}

int64_t EngineTurns::waiting() const {
  common::MutexLock lock(&mu_);
  // Tickets handed out minus the one being served (if any).
  const uint64_t outstanding = next_ticket_ - serving_;
  return outstanding == 0 ? 0 : static_cast<int64_t>(outstanding - 1);
}

void TurnTakingBackend::AcquireTurn() {
  const auto start = std::chrono::steady_clock::now();
  turns_->Acquire(this);
  last_wait_ += std::chrono::steady_clock::now() - start;
}

int64_t TurnTakingBackend::PartTokens() const {
  if (shared_turn_tokens_ > 0 &&
      std::chrono::steady_clock::now() - turns_->LastTurnEndedByAnother(this) < recent_) {
    return shared_turn_tokens_;
  }
  return max_turn_tokens_;
}

absl::Status TurnTakingBackend::Run(absl::Span<const engine::Sequence> batch,
                                    absl::Span<const OutputSpec> specs,
                                    std::vector<InputOutput>* outputs) {
  last_wait_ = std::chrono::nanoseconds(0);
  int64_t total = 0;
  for (const engine::Sequence& sequence : batch) total += sequence.ids.size();
  const int64_t first_part = PartTokens();
  if (first_part <= 0 || total <= first_part) {
    AcquireTurn();
    absl::Status status = backend_->Run(batch, specs, outputs);
    turns_->Release();
    return status;
  }
  outputs->clear();
  std::vector<InputOutput> part;
  size_t begin = 0;
  while (begin < batch.size()) {
    const int64_t part_tokens = begin == 0 ? first_part : PartTokens();
    size_t end = begin;
    int64_t tokens = 0;
    while (end < batch.size() &&
           (end == begin || part_tokens <= 0 ||
            tokens + static_cast<int64_t>(batch[end].ids.size()) <= part_tokens)) {
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
