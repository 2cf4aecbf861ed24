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

void BenchStats::Record(std::chrono::nanoseconds latency, grpc::StatusCode code, int64_t inputs,
                        int64_t tokens) {
  const double seconds = std::chrono::duration<double>(latency).count();
  std::lock_guard<std::mutex> lock(mu_);
  latencies_.push_back(seconds);
  ++codes_[code];
  if (code == grpc::StatusCode::OK) {
    inputs_ += inputs;
    tokens_ += tokens;
  } else {
    ++failed_;
  }
}

void BenchStats::Counts(int64_t* answered, int64_t* failed) const {
  std::lock_guard<std::mutex> lock(mu_);
  *answered = static_cast<int64_t>(latencies_.size());
  *failed = failed_;
}

BenchSummary BenchStats::Summarize(double elapsed_seconds) const {
  std::lock_guard<std::mutex> lock(mu_);
  BenchSummary summary;
  summary.elapsed_seconds = elapsed_seconds;
  summary.requests = static_cast<int64_t>(latencies_.size());
  summary.ok = summary.requests - failed_;
  summary.inputs = inputs_;
  summary.tokens = tokens_;
  for (const auto& [code, count] : codes_) summary.codes[StatusCodeName(code)] = count;
  std::vector<double> sorted = latencies_;
  std::sort(sorted.begin(), sorted.end());
  LatencySummary& latency = summary.latency;
  latency.p50 = NearestRank(sorted, 0.50);
  latency.p90 = NearestRank(sorted, 0.90);
  latency.p99 = NearestRank(sorted, 0.99);
  latency.p999 = NearestRank(sorted, 0.999);
  latency.max = sorted.empty() ? 0 : sorted.back();
  latency.mean = sorted.empty() ? 0
                                : std::accumulate(sorted.begin(), sorted.end(), 0.0) /
                                      static_cast<double>(sorted.size());
  return summary;
}

}  // namespace client
