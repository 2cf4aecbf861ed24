// The one runner of request plans (server/core/requests/plan.h): refuses
// when the server stops accepting, times the plan's making as tokenization,
// submits its parts in turn to the sink with the request's deadline and
// cancellation, counts what the engine ran, and calls `done` exactly once
// with the plan's answer or the first error. Every request kind runs through
// it, so these rules are written once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/api/refusals.h"
#include "server/core/batching/batch_sink.h"
#include "server/core/batching/clock.h"
#include "server/core/metrics/metrics.h"
#include "server/core/requests/plan.h"

namespace server::core {

class PlanRunner {
 public:
  using OutputsDone = std::function<void(absl::StatusOr<std::vector<InputOutput>>)>;

  // Both must outlive the runner; the sink may be changed before the first request.
  PlanRunner(BatchSink* sink, ServerMetrics* metrics) : sink_(sink), metrics_(metrics) {}
  void set_sink(BatchSink* sink) { sink_ = sink; }

  // `make_plan()` -> absl::StatusOr<Plan<Result>>, called on this thread.
  // `done` is called exactly once: here when refused or the plan fails,
  // else from the thread of the last part's answer. `is_cancelled` may be empty.
  template <typename Result, typename MakePlan>
  void Run(MakePlan make_plan, Clock::time_point deadline, std::function<bool()> is_cancelled,
           std::function<void(absl::StatusOr<Result>)> done) {
    if (!accepting_) {
      done(core::ShuttingDown());
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Plan<Result>> plan = make_plan();
    metrics_->Tokenized(std::chrono::steady_clock::now() - start);
    if (!plan.ok()) {
      done(plan.status());
      return;
    }
    RunParts(std::move(plan->parts), deadline, std::move(is_cancelled),
             [finish = std::move(plan->finish),
              done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
               if (!outputs.ok()) {
                 done(outputs.status());
                 return;
               }
               done(finish(*std::move(outputs)));
             });
  }

  // From now on every plan is refused with UNAVAILABLE.
  void StopAccepting() { accepting_ = false; }
  bool accepting() const { return accepting_; }

 private:
  // Submits `parts` one after another (the next when the previous is
  // answered) and calls `done` once with all their outputs in order, or the
  // first error; the outputs are counted in the metrics first.
  void RunParts(std::vector<std::unique_ptr<BatchRequest>> parts, Clock::time_point deadline,
                std::function<bool()> is_cancelled, OutputsDone done);

  BatchSink* sink_;
  ServerMetrics* const metrics_;
  std::atomic<bool> accepting_{true};
};

}  // namespace server::core
