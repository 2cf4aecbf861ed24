// Issues a bench run's Encode calls on gRPC's callback API: each call is a
// small heap object whose completion callback records it (and, in a closed
// loop, starts the next one), so one process keeps hundreds of calls in
// flight, and sustains high open-loop rates, without a thread per call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "client/bench_options.h"
#include "client/bench_stats.h"
#include "client/bench_texts.h"
#include "client/client_options.h"
#include "common/mutex.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

class BenchDriver {
 public:
  using Clock = std::chrono::steady_clock;

  // Calls go round-robin over `stubs` (one per connection). All pointers
  // must outlive the driver.
  BenchDriver(std::vector<std::unique_ptr<encoder::v1::Encoder::Stub>> stubs,
              const BenchRequests* requests, const BenchOptions& options,
              const ConnectionOptions& connection, BenchStats* stats);

  // Starts calls for the options' duration, then waits until every call is
  // answered (each has the deadline connection.timeout and its API key). Returns the time from the
  // first start to the last answer.
  Clock::duration Run() ABSL_LOCKS_EXCLUDED(mu_);

  int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

 private:
  struct Call;
  void RunClosedLoop(int concurrency);
  void RunOpenLoop(int max_in_flight) ABSL_LOCKS_EXCLUDED(mu_);
  // Starts one call; its latency counts from `start` (the intended start in
  // an open loop). The caller has counted it in in_flight_. Not under mu_:
  // gRPC may run the call's callback (OnDone) before it returns.
  void StartCall(Clock::time_point start) ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone(Call* call, const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsInvalid(uint64_t index) const;

  const std::vector<std::unique_ptr<encoder::v1::Encoder::Stub>> stubs_;
  const BenchRequests* const requests_;
  const BenchOptions options_;
  const ConnectionOptions connection_;
  BenchStats* const stats_;

  Clock::time_point stop_at_;  // no call starts after it; set before the first call
  std::atomic<uint64_t> next_index_{0};
  std::atomic<int64_t> in_flight_{0};
  common::Mutex mu_;
  common::CondVar answered_cv_;  // a call was answered and not replaced
  Clock::time_point last_answer_ ABSL_GUARDED_BY(mu_);
};

}  // namespace client
