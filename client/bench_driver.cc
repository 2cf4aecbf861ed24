#include "client/bench_driver.h"

#include <random>
#include <thread>

#include "client/channel.h"

namespace client {

struct BenchDriver::Call {
  grpc::ClientContext context;
  encoder::v1::EncodeResponse response;
  Clock::time_point start;         // intended start: latency counts from here
  Clock::time_point sent;          // actual start on gRPC, where the deadline starts
  encoder::v1::EncodeRequest own;  // --repeat-fraction's unique request
};

BenchDriver::BenchDriver(std::vector<std::unique_ptr<encoder::v1::Encoder::Stub>> stubs,
                         const BenchRequests* requests, const BenchOptions& options,
                         const ConnectionOptions& connection, BenchStats* stats)
    : stubs_(std::move(stubs)),
      requests_(requests),
      options_(options),
      connection_(connection),
      stats_(stats) {}

BenchDriver::Clock::duration BenchDriver::Run() {
  const Clock::time_point first_start = Clock::now();
  stop_at_ = first_start + options_.duration;
  {
    common::MutexLock lock(&mu_);
    last_answer_ = first_start;
  }
  if (options_.rate > 0) {
    RunOpenLoop(options_.concurrency);
  } else {
    RunClosedLoop(options_.concurrency);
  }
  common::MutexLock lock(&mu_);
  while (in_flight_.load() != 0) answered_cv_.Wait(&mu_);
  return last_answer_ - first_start;
}

void BenchDriver::RunClosedLoop(int concurrency) {
  // Each answered call starts the next from its callback until stop_at_.
  in_flight_ += concurrency;
  for (int i = 0; i < concurrency; ++i) StartCall(Clock::now());
}

void BenchDriver::RunOpenLoop(int max_in_flight) {
  // Poisson arrivals: exponential gaps of mean 1/rate between intended starts.
  std::mt19937_64 random(options_.seed);
  std::exponential_distribution<double> gap(options_.rate);
  Clock::time_point next = Clock::now();
  for (;;) {
    next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(random)));
    if (next >= stop_at_) break;
    std::this_thread::sleep_until(next);
    {
      // At the cap, wait for an answer; the call's latency still counts from
      // `next`, so the wait is not hidden (no coordinated omission).
      common::MutexLock lock(&mu_);
      while (in_flight_.load() >= max_in_flight) answered_cv_.Wait(&mu_);
      ++in_flight_;
    }
    StartCall(next);
  }
}

namespace {

// A hash of (seed, index) in [0, 1): reproducible, and no shared generator to lock.
double Draw(uint64_t seed, uint64_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace

bool BenchDriver::IsInvalid(uint64_t index) const {
  if (options_.invalid_fraction <= 0) return false;
  return Draw(options_.seed, index) < options_.invalid_fraction;
}

void BenchDriver::StartCall(Clock::time_point start) {
  const uint64_t index = next_index_.fetch_add(1, std::memory_order_relaxed);
  auto* call = new Call();
  call->start = start;
  call->sent = Clock::now();
  PrepareCall(connection_, &call->context);
  const encoder::v1::EncodeRequest* request =
      IsInvalid(index) ? &requests_->Invalid() : &requests_->Next(index);
  if (options_.repeat_fraction > 0 && request != &requests_->Invalid()) {
    // Another seed than IsInvalid's, so that the two draws are independent.
    if (Draw(options_.seed ^ 0x5bd1e995ull, index) < options_.repeat_fraction) {
      request = &requests_->Next(0);
    } else {
      call->own = requests_->Unique(index);
      request = &call->own;
    }
  }
  stubs_[index % stubs_.size()]->async()->Encode(
      &call->context, request, &call->response,
      [this, call](grpc::Status status) { OnDone(call, status); });
}

void BenchDriver::OnDone(Call* call, const grpc::Status& status) {
  const Clock::time_point now = Clock::now();
  int64_t tokens = 0;
  for (const encoder::v1::Output& output : call->response.outputs()) tokens += output.tokens();
  stats_->Record(now - call->start, now - call->sent, status, call->response.outputs_size(),
                 tokens);
  delete call;
  const bool closed_loop = options_.rate <= 0;
  if (closed_loop && now < stop_at_) {
    StartCall(now);  // takes over this call's place in flight
    common::MutexLock lock(&mu_);
    last_answer_ = std::max(last_answer_, now);
    return;
  }
  common::MutexLock lock(&mu_);
  last_answer_ = std::max(last_answer_, now);
  --in_flight_;
  answered_cv_.SignalAll();
}

}  // namespace client
