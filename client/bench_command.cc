// encoder-client bench: a load generator for the Encode RPC. Closed loop
// (--concurrency) or open loop (--rate, Poisson arrivals, latency from the
// intended start: no coordinated omission), for --duration; a live line on
// stderr when it is a terminal; a report (or --json) on stdout.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "client/bench_driver.h"
#include "client/bench_report.h"
#include "client/bench_texts.h"
#include "client/channel.h"
#include "client/commands.h"
#include "client/inputs.h"
#include "common/mutex.h"

namespace client {
namespace {

// The number of distinct synthetic texts: enough to vary, few enough to build at once.
constexpr int kSyntheticTexts = 4096;

absl::Status CheckOptions(const BenchOptions& options, const ConnectionOptions& connection) {
  if (options.rate < 0) return absl::InvalidArgumentError("--rate must be 0 or more");
  if (options.concurrency <= 0) return absl::InvalidArgumentError("--concurrency must be positive");
  if (options.duration.count() <= 0)
    return absl::InvalidArgumentError("--duration must be positive");
  if (options.inputs_per_request <= 0) {
    return absl::InvalidArgumentError("--inputs-per-request must be positive");
  }
  if (options.connections <= 0) return absl::InvalidArgumentError("--connections must be positive");
  if (options.invalid_fraction < 0 || options.invalid_fraction > 1) {
    return absl::InvalidArgumentError("--invalid-fraction must be in 0..1");
  }
  if (options.repeat_fraction < 0 || options.repeat_fraction > 1) {
    return absl::InvalidArgumentError("--repeat-fraction must be in 0..1");
  }
  if (connection.timeout.count() <= 0)
    return absl::InvalidArgumentError("--timeout must be positive");
  return absl::OkStatus();
}

// Rewrites the live line once a second until `done`; clears it at the end.
class ProgressPrinter {
 public:
  ProgressPrinter(const BenchStats* stats, const BenchDriver* driver)
      : stats_(stats), driver_(driver), thread_([this] { Loop(); }) {}
  ~ProgressPrinter() {
    {
      common::MutexLock lock(&mu_);
      done_ = true;
    }
    cv_.SignalAll();
    thread_.join();
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_) {
    const auto start = std::chrono::steady_clock::now();
    int64_t last_answered = 0;
    common::MutexLock lock(&mu_);
    for (auto next = start + std::chrono::seconds(1);; next += std::chrono::seconds(1)) {
      bool timed_out = false;
      while (!done_ && !timed_out) timed_out = cv_.WaitWithDeadline(&mu_, next);
      if (done_) return;
      int64_t answered = 0;
      int64_t failed = 0;
      stats_->Counts(&answered, &failed);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::string line =
          ProgressLine(seconds, answered, failed, static_cast<double>(answered - last_answered),
                       driver_->in_flight());
      last_answered = answered;
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
    }
  }

  const BenchStats* const stats_;
  const BenchDriver* const driver_;
  common::Mutex mu_;
  common::CondVar cv_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace

int RunBench(const ConnectionOptions& connection, const BenchOptions& requested, std::ostream& out,
             std::ostream& err) {
  const BenchOptions options = WithDefaults(requested);
  absl::StatusOr<encoder::v1::Pooling> pooling = ParsePooling(options.pooling);
  for (const absl::Status& status : {CheckOptions(options, connection), pooling.status()}) {
    if (!status.ok()) {
      err << "encoder-client: " << status.message() << "\n";
      return 2;
    }
  }
  std::mt19937_64 random(options.seed);
  absl::StatusOr<std::vector<std::string>> texts =
      options.input_file.empty()
          ? SyntheticTexts(kSyntheticTexts, options.min_words, options.max_words, random)
          : ReadTextLines(options.input_file);
  if (!texts.ok()) {
    err << "encoder-client: " << texts.status().message() << "\n";
    return 2;
  }
  const BenchRequests requests(*texts, options.inputs_per_request, *pooling, options.normalize,
                               options.truncate, connection.model);

  std::vector<std::unique_ptr<encoder::v1::Encoder::Stub>> stubs;
  for (int i = 0; i < options.connections; ++i) {
    stubs.push_back(encoder::v1::Encoder::NewStub(
        MakeChannel(connection, /*own_connection=*/options.connections > 1)));
  }
  BenchStats stats;
  BenchDriver driver(std::move(stubs), &requests, options, connection, &stats);
  std::chrono::steady_clock::duration elapsed{};
  {
    std::unique_ptr<ProgressPrinter> progress;
    if (options.progress && isatty(STDERR_FILENO)) {
      progress = std::make_unique<ProgressPrinter>(&stats, &driver);
    }
    elapsed = driver.Run();
  }
  const BenchSummary summary = stats.Summarize(std::chrono::duration<double>(elapsed).count());
  out << (options.json ? BenchReportJson(options, summary) + "\n"
                       : BenchReportText(options, summary));
  out.flush();
  // A run where nothing succeeded measured nothing (server down, wrong target).
  if (summary.ok == 0) {
    err << "encoder-client: bench: no call succeeded\n";
    return 1;
  }
  return 0;
}

}  // namespace client
