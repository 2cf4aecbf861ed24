#include "server/core/batching/engine_turns.h"

#include <algorithm>

namespace server::core {
namespace {

// The weight of the latest part in the time-per-token average: recent
// batches count most, one odd batch does not swing the estimate.
constexpr double kTimePerTokenWeight = 0.25;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

Clock::duration FromSeconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

void EngineTurns::Acquire(const void* owner, Clock::duration expected) {
  common::MutexLock lock(&mu_);
  AwaitTurn(next_ticket_++, Waiting{owner, expected});
}

void EngineTurns::Release() {
  common::MutexLock lock(&mu_);
  EndTurn();
}

bool EngineTurns::YieldToWaiting(const void* owner, Clock::duration remaining) {
  common::MutexLock lock(&mu_);
  const bool shorter_waits = std::any_of(waiting_.begin(), waiting_.end(), [&](const auto& entry) {
    return entry.second.owner != owner && entry.second.expected < remaining;
  });
  if (!shorter_waits) return false;
  const uint64_t ticket = next_ticket_++;
  EndTurn();
  AwaitTurn(ticket, Waiting{owner, remaining});
  return true;
}

void EngineTurns::EndTurn() {
  ++serving_;
  turn_changed_.SignalAll();
}

void EngineTurns::AwaitTurn(uint64_t ticket, Waiting waiting) {
  waiting_.emplace_back(ticket, waiting);
  while (serving_ != ticket) turn_changed_.Wait(&mu_);
  waiting_.erase(std::find_if(waiting_.begin(), waiting_.end(),
                              [ticket](const auto& entry) { return entry.first == ticket; }));
}

int64_t EngineTurns::waiting() const {
  common::MutexLock lock(&mu_);
  return static_cast<int64_t>(waiting_.size());
}

TurnTakingBackend::TurnTakingBackend(Backend* backend, EngineTurns* turns, int64_t max_turn_tokens)
    : backend_(backend), turns_(turns), max_turn_tokens_(max_turn_tokens) {
  backend_->SetBetweenLayers(
      [this](int layers_done, int layers) { BetweenLayers(layers_done, layers); });
}

void TurnTakingBackend::BetweenLayers(int layers_done, int layers) {
  Clock* clock = turns_->clock();
  const Clock::time_point now = clock->Now();
  const Clock::duration engine_time = now - part_start_ - part_yielded_;
  const Clock::duration remaining = engine_time / layers_done * (layers - layers_done);
  if (!turns_->YieldToWaiting(this, remaining)) return;
  const Clock::duration yielded = clock->Now() - now;
  part_yielded_ += yielded;
  last_wait_ += yielded;
}

absl::Status TurnTakingBackend::RunPart(absl::Span<const engine::Sequence> part,
                                        absl::Span<const OutputSpec> specs, int64_t tokens,
                                        std::vector<InputOutput>* outputs) {
  Clock* clock = turns_->clock();
  const Clock::time_point start = clock->Now();
  turns_->Acquire(this, FromSeconds(seconds_per_token_ * static_cast<double>(tokens)));
  part_start_ = clock->Now();
  part_yielded_ = {};
  last_wait_ += part_start_ - start;
  absl::Status status = backend_->Run(part, specs, outputs);
  const Clock::duration engine_time = clock->Now() - part_start_ - part_yielded_;
  turns_->Release();
  if (tokens > 0) {
    const double per_token = Seconds(engine_time) / static_cast<double>(tokens);
    seconds_per_token_ =
        seconds_per_token_ == 0
            ? per_token
            : seconds_per_token_ + kTimePerTokenWeight * (per_token - seconds_per_token_);
  }
  return status;
}

absl::Status TurnTakingBackend::Run(absl::Span<const engine::Sequence> batch,
                                    absl::Span<const OutputSpec> specs,
                                    std::vector<InputOutput>* outputs) {
  last_wait_ = std::chrono::nanoseconds(0);
  int64_t total = 0;
  for (const engine::Sequence& sequence : batch) total += sequence.ids.size();
  if (max_turn_tokens_ <= 0 || total <= max_turn_tokens_) {
    return RunPart(batch, specs, total, outputs);
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
    absl::Status status = RunPart(batch.subspan(begin, end - begin),
                                  specs.subspan(begin, end - begin), tokens, &part);
    if (!status.ok()) return status;
    for (InputOutput& output : part) outputs->push_back(std::move(output));
    begin = end;
  }
  return absl::OkStatus();
}

}  // namespace server::core
