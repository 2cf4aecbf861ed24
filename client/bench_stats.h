// What a bench run observed: one latency sample per call (kept, so the
// percentiles are exact: nearest rank over the sorted samples), the calls
// per status code and per error message, and the inputs and tokens of the
// successful calls.
//
// Two clocks per call. `latency` counts from the call's intended start (in an
// open loop, its arrival time: a call held back by the in-flight cap shows
// the wait, no coordinated omission). `since_send` counts from when the call
// was actually started on gRPC, which is when its deadline starts: it is what
// to compare with --timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "common/mutex.h"

namespace client {

struct LatencySummary {  // seconds
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
  double mean = 0;
};

struct BenchSummary {
  // At most this many distinct "CODE: message" keys are kept in `errors`; the
  // calls with further messages are counted under "CODE: (other messages)".
  static constexpr int kMaxErrorMessages = 32;

  double elapsed_seconds = 0;  // first call started .. last call answered
  int64_t requests = 0;        // calls answered, whatever the code
  int64_t ok = 0;
  int64_t inputs = 0;                     // in OK responses
  int64_t tokens = 0;                     // in OK responses, as the server counted them
  LatencySummary latency;                 // over every call, failed ones included
  LatencySummary ok_latency;              // over the OK calls only
  LatencySummary since_send;              // from the actual send, over every call
  std::map<std::string, int64_t> codes;   // "OK", "INVALID_ARGUMENT", ...
  std::map<std::string, int64_t> errors;  // "UNAVAILABLE: server is shutting down": n, ...
};

// The q-quantile (0 < q <= 1) of sorted samples, nearest rank: the smallest
// sample with at least q of all samples at or below it. 0 when empty.
double NearestRank(const std::vector<double>& sorted, double q);

class BenchStats {
 public:
  // Thread-safe; called from gRPC's callback threads.
  // `since_send` is taken equal to `latency`, and errors have no message.
  void Record(std::chrono::nanoseconds latency, grpc::StatusCode code, int64_t inputs,
              int64_t tokens) ABSL_LOCKS_EXCLUDED(mu_);
  void Record(std::chrono::nanoseconds latency, std::chrono::nanoseconds since_send,
              const grpc::Status& status, int64_t inputs, int64_t tokens) ABSL_LOCKS_EXCLUDED(mu_);

  // For the progress line: calls answered so far, and how many failed.
  void Counts(int64_t* answered, int64_t* failed) const ABSL_LOCKS_EXCLUDED(mu_);

  BenchSummary Summarize(double elapsed_seconds) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable common::Mutex mu_;
  std::vector<double> latencies_ ABSL_GUARDED_BY(mu_);  // seconds
  std::vector<double> ok_latencies_ ABSL_GUARDED_BY(mu_);
  std::vector<double> since_send_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> errors_ ABSL_GUARDED_BY(mu_);
  std::map<grpc::StatusCode, int64_t> codes_ ABSL_GUARDED_BY(mu_);
  int64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t inputs_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t tokens_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace client
