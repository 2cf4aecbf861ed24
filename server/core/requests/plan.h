// A request as a plan: the batch parts it submits and how their outputs
// become its answer. Each request kind makes its plan on the caller's thread
// (server/core/requests/plans.h); the one runner (server/core/dispatch/plan_runner.h)
// submits the parts in turn and calls `finish` with all their outputs, in
// order, on the thread of the last answer.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/batch_request.h"

namespace server::core {

template <typename Result>
struct Plan {
  // Each with inputs and spec; the runner sets deadline, cancellation and
  // `done`. Submitted one after another: the next when the previous is
  // answered, so that a request larger than one batch (rerank) queues in
  // bounded parts.
  std::vector<std::unique_ptr<BatchRequest>> parts;
  // The parts' outputs, concatenated in part order, into the answer. Must not
  // hold references to the request (it is gone by then).
  std::function<absl::StatusOr<Result>(std::vector<InputOutput>)> finish;
};

// A plan of one part.
template <typename Result, typename Finish>
Plan<Result> OnePartPlan(std::unique_ptr<BatchRequest> part, Finish finish) {
  Plan<Result> plan;
  plan.parts.push_back(std::move(part));
  plan.finish = std::move(finish);
  return plan;
}

}  // namespace server::core
