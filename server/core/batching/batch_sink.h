// Where a request's batch parts go: the batcher, or a decorator in front of
// it (the result cache, server/core/cache/caching_sink.h). One contract for
// all: Submit answers the request's `done` exactly once, a refusal included,
// so the caller never handles a refusal apart from an engine answer.
#pragma once

#include <memory>

#include "server/core/batching/batch_request.h"

namespace server::core {

class Batcher;

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // Takes `request` (inputs, spec, deadline, cancellation, `done`) and calls
  // its `done` exactly once: now, on this thread, when it is refused
  // (RESOURCE_EXHAUSTED, UNAVAILABLE), else later with its outputs or error.
  virtual void Submit(std::unique_ptr<BatchRequest> request) = 0;
};

// The batcher as a sink: a refused request is answered here, since the
// batcher never calls the `done` of a request it refuses.
class BatcherSink : public BatchSink {
 public:
  // `batcher` must outlive the sink.
  explicit BatcherSink(Batcher* batcher) : batcher_(batcher) {}
  void Submit(std::unique_ptr<BatchRequest> request) override;

 private:
  Batcher* const batcher_;
};

}  // namespace server::core
