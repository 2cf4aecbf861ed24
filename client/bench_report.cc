#include "client/bench_report.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace client {
namespace {

double PerSecond(int64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0;
}

std::string Milliseconds(double seconds) { return absl::StrFormat("%.2f ms", seconds * 1e3); }

nlohmann::json LatencyJson(const LatencySummary& latency) {
  return {{"p50", latency.p50},    {"p90", latency.p90}, {"p99", latency.p99},
          {"p99_9", latency.p999}, {"max", latency.max}, {"mean", latency.mean}};
}

}  // namespace

std::string DescribeRun(const BenchOptions& options) {
  std::string run =
      options.rate > 0
          ? absl::StrFormat("open loop, %.1f requests/s (Poisson arrivals)", options.rate)
          : absl::StrCat("closed loop, concurrency ", options.concurrency);
  absl::StrAppend(&run, ", ", options.inputs_per_request,
                  options.inputs_per_request == 1 ? " input" : " inputs", " per request, ");
  if (options.input_file.empty()) {
    absl::StrAppend(&run, "synthetic texts of ", options.min_words, "..", options.max_words,
                    " words");
  } else {
    absl::StrAppend(&run, "texts from ", options.input_file);
  }
  return run;
}

std::string BenchReportText(const BenchOptions& options, const BenchSummary& s) {
  const double t = s.elapsed_seconds;
  std::string codes;
  for (const auto& [code, count] : s.codes) absl::StrAppend(&codes, "  ", code, " ", count);
  return absl::StrCat(
      "encoder-client bench: ", DescribeRun(options), "\n",
      absl::StrFormat("  requests     %d in %.2f s (%d OK, %d failed)\n", s.requests, t, s.ok,
                      s.requests - s.ok),
      absl::StrFormat("  throughput   %.1f requests/s  %.1f inputs/s  %.1f tokens/s\n",
                      PerSecond(s.requests, t), PerSecond(s.inputs, t), PerSecond(s.tokens, t)),
      "  latency      p50 ", Milliseconds(s.latency.p50), "  p90 ", Milliseconds(s.latency.p90),
      "  p99 ", Milliseconds(s.latency.p99), "  p99.9 ", Milliseconds(s.latency.p999), "  max ",
      Milliseconds(s.latency.max), "  (mean ", Milliseconds(s.latency.mean), ")\n",
      "  codes       ", codes, "\n");
}

std::string BenchReportJson(const BenchOptions& options, const BenchSummary& s) {
  const double t = s.elapsed_seconds;
  nlohmann::json report = {
      {"mode", options.rate > 0 ? "open" : "closed"},
      {"concurrency", options.concurrency},
      {"rate", options.rate},
      {"duration_seconds", std::chrono::duration<double>(options.duration).count()},
      {"inputs_per_request", options.inputs_per_request},
      {"elapsed_seconds", t},
      {"requests", s.requests},
      {"ok", s.ok},
      {"errors", s.requests - s.ok},
      {"inputs", s.inputs},
      {"tokens", s.tokens},
      {"requests_per_second", PerSecond(s.requests, t)},
      {"inputs_per_second", PerSecond(s.inputs, t)},
      {"tokens_per_second", PerSecond(s.tokens, t)},
      {"latency_seconds", LatencyJson(s.latency)},
      {"ok_latency_seconds", LatencyJson(s.ok_latency)},
      {"since_send_seconds", LatencyJson(s.since_send)},
      {"codes", s.codes},
      {"error_messages", s.errors},
  };
  return report.dump();
}

std::string ProgressLine(double seconds, int64_t answered, int64_t failed, double rate,
                         int64_t in_flight) {
  return absl::StrFormat("%6.1f s  %d calls  %d errors  %.1f calls/s  %d in flight", seconds,
                         answered, failed, rate, in_flight);
}

}  // namespace client
