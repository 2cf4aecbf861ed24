#include "server/core/dispatch/plan_runner.h"

#include <cstdint>
#include <iterator>

namespace server::core {
namespace {

// A plan's parts, submitted one at a time from the previous part's answer.
struct PartChain {
  std::vector<std::unique_ptr<BatchRequest>> parts;
  size_t next = 0;
  std::vector<InputOutput> outputs;
  Clock::time_point deadline;
  std::function<bool()> is_cancelled;
  PlanRunner::OutputsDone done;
  BatchSink* sink = nullptr;
};

void SubmitNextPart(const std::shared_ptr<PartChain>& chain) {
  std::unique_ptr<BatchRequest> part = std::move(chain->parts[chain->next++]);
  part->deadline = chain->deadline;
  part->is_cancelled = chain->is_cancelled;
  part->done = [chain](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      chain->done(outputs.status());
      return;
    }
    if (chain->outputs.empty()) {
      chain->outputs = *std::move(outputs);
    } else {
      std::move(outputs->begin(), outputs->end(), std::back_inserter(chain->outputs));
    }
    if (chain->next == chain->parts.size()) {
      chain->done(std::move(chain->outputs));
      return;
    }
    SubmitNextPart(chain);
  };
  chain->sink->Submit(std::move(part));  // answers `done` in every case
}

}  // namespace

void PlanRunner::RunParts(std::vector<std::unique_ptr<BatchRequest>> parts,
                          Clock::time_point deadline, std::function<bool()> is_cancelled,
                          OutputsDone done) {
  OutputsDone counted = [metrics = metrics_,
                         done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (outputs.ok()) {
      int64_t tokens = 0;
      for (const InputOutput& output : *outputs) tokens += output.tokens;
      metrics->Encoded(static_cast<int64_t>(outputs->size()), tokens);
    }
    done(std::move(outputs));
  };
  if (parts.empty()) {  // nothing for the engine (no plan makes none today)
    counted(std::vector<InputOutput>());
    return;
  }
  auto chain = std::make_shared<PartChain>();
  chain->parts = std::move(parts);
  chain->deadline = deadline;
  chain->is_cancelled = std::move(is_cancelled);
  chain->done = std::move(counted);
  chain->sink = sink_;
  SubmitNextPart(chain);
}

}  // namespace server::core
