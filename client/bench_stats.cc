#include "client/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "client/rpc_error.h"

namespace client {

double NearestRank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

namespace {

LatencySummary SummarizeSamples(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  LatencySummary latency;
  latency.p50 = NearestRank(samples, 0.50);
  latency.p90 = NearestRank(samples, 0.90);
  latency.p99 = NearestRank(samples, 0.99);
  latency.p999 = NearestRank(samples, 0.999);
  latency.max = samples.empty() ? 0 : samples.back();
  latency.mean = samples.empty() ? 0
                                 : std::accumulate(samples.begin(), samples.end(), 0.0) /
                                       static_cast<double>(samples.size());
  return latency;
}

}  // namespace

void BenchStats::Record(std::chrono::nanoseconds latency, grpc::StatusCode code, int64_t inputs,
                        int64_t tokens) {
  Record(latency, latency, grpc::Status(code, ""), inputs, tokens);
}

void BenchStats::Record(std::chrono::nanoseconds latency, std::chrono::nanoseconds since_send,
                        const grpc::Status& status, int64_t inputs, int64_t tokens) {
  const double seconds = std::chrono::duration<double>(latency).count();
  const grpc::StatusCode code = status.error_code();
  std::string error;
  if (code != grpc::StatusCode::OK) {
    error = StatusCodeName(code) + ": " + status.error_message();
  }
  common::MutexLock lock(&mu_);
  latencies_.push_back(seconds);
  since_send_.push_back(std::chrono::duration<double>(since_send).count());
  ++codes_[code];
  if (code == grpc::StatusCode::OK) {
    ok_latencies_.push_back(seconds);
    inputs_ += inputs;
    tokens_ += tokens;
    return;
  }
  ++failed_;
  auto it = errors_.find(error);
  if (it != errors_.end()) {
    ++it->second;
  } else if (static_cast<int>(errors_.size()) < BenchSummary::kMaxErrorMessages) {
    errors_.emplace(std::move(error), 1);
  } else {
    ++errors_[StatusCodeName(code) + ": (other messages)"];
  }
}

void BenchStats::Counts(int64_t* answered, int64_t* failed) const {
  common::MutexLock lock(&mu_);
  *answered = static_cast<int64_t>(latencies_.size());
  *failed = failed_;
}

BenchSummary BenchStats::Summarize(double elapsed_seconds) const {
  common::MutexLock lock(&mu_);
  BenchSummary summary;
  summary.elapsed_seconds = elapsed_seconds;
  summary.requests = static_cast<int64_t>(latencies_.size());
  summary.ok = summary.requests - failed_;
  summary.inputs = inputs_;
  summary.tokens = tokens_;
  for (const auto& [code, count] : codes_) summary.codes[StatusCodeName(code)] = count;
  summary.errors = errors_;
  summary.latency = SummarizeSamples(latencies_);
  summary.ok_latency = SummarizeSamples(ok_latencies_);
  summary.since_send = SummarizeSamples(since_send_);
  return summary;
}

}  // namespace client
