// The final report of `encoder-client bench`: a few aligned lines for people,
// or one JSON object (--json) for scripts.
#pragma once

#include <string>

#include "client/bench_options.h"
#include "client/bench_stats.h"

namespace client {

// "closed loop, concurrency 32" or "open loop, 200 requests/s (Poisson)", and the inputs.
std::string DescribeRun(const BenchOptions& options);

std::string BenchReportText(const BenchOptions& options, const BenchSummary& summary);

// {"mode": "closed"|"open", "concurrency", "rate", "duration_seconds",
//  "inputs_per_request", "elapsed_seconds", "requests", "ok", "errors", "inputs",
//  "tokens", "requests_per_second", "inputs_per_second", "tokens_per_second",
//  "latency_seconds": {"p50", "p90", "p99", "p99_9", "max", "mean"},
//  "ok_latency_seconds": {...}  (the OK calls only),
//  "since_send_seconds": {...}  (every call, from its actual send, where its
//                                deadline starts: compare with --timeout),
//  "codes": {"OK": n, ...},
//  "error_messages": {"UNAVAILABLE: server is shutting down": n, ...}}
// Latencies are from each call's intended start unless said otherwise.
std::string BenchReportJson(const BenchOptions& options, const BenchSummary& summary);

// The live line: "  12.0 s  12345 calls  3 errors  1023.4 calls/s  32 in flight".
std::string ProgressLine(double seconds, int64_t answered, int64_t failed, double rate,
                         int64_t in_flight);

}  // namespace client
