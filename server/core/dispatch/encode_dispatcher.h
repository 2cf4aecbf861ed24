// The service's entry point for every transport: each request kind's plan
// (server/core/requests/plans.h) is made on the calling thread (validated and
// tokenized), its parts queued on the batcher, and the answer given from the
// batcher's thread (PlanRunner); tokenize and decode are answered at once.
// Plain C++ types in and out (server/core/api/service_types.h); the gRPC and
// HTTP adapters convert their wire formats, so requests from both share the
// queue and can share a batch.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/batch_sink.h"
#include "server/core/batching/batcher.h"
#include "server/core/batching/clock.h"
#include "server/core/cache/caching_sink.h"
#include "server/core/cache/result_cache.h"
#include "server/core/dispatch/plan_runner.h"
#include "server/core/metrics/metrics.h"
#include "server/core/requests/input_tokenizer.h"
#include "server/core/requests/late_chunking.h"

namespace server::core {

class EncodeDispatcher {
 public:
  template <typename Result>
  using DoneOf = std::function<void(absl::StatusOr<Result>)>;
  using Done = DoneOf<core::EncodeResult>;
  using ClassifyDone = DoneOf<core::ClassifyResult>;
  using RerankDone = DoneOf<core::RerankResult>;
  using SparseDone = DoneOf<core::SparseResult>;
  using MultiDone = DoneOf<core::MultiResult>;
  using ChunksDone = DoneOf<core::ChunksResult>;

  // All pointers must outlive the dispatcher.
  EncodeDispatcher(const InputTokenizer* inputs, Batcher* batcher, ServerMetrics* metrics);

  // Each calls `done` exactly once: at once (on this thread) when the request
  // is refused or every input is a cache hit, else later from the batcher's
  // thread. Keeps no reference to the request after returning. `is_cancelled`
  // may be empty. Errors: INVALID_ARGUMENT (the message names the input or,
  // for chunks, the chunk: "chunks[2]: ..."), RESOURCE_EXHAUSTED (queue
  // full), DEADLINE_EXCEEDED, CANCELLED, UNAVAILABLE (shutting down);
  // FAILED_PRECONDITION when the model lacks the head. All share one queue
  // and its batches. A rerank request runs as parts of at most one batch (and
  // the per-request limits) each, submitted one after another, so it may hold
  // more texts than any of those bounds (up to max_rerank_texts).
  void Dispatch(const core::EncodeRequest& request, Clock::time_point deadline,
                std::function<bool()> is_cancelled, Done done);
  void DispatchClassify(const core::ClassifyRequest& request, Clock::time_point deadline,
                        std::function<bool()> is_cancelled, ClassifyDone done);
  void DispatchRerank(const core::RerankRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, RerankDone done);
  void DispatchSparse(const core::SparseRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, SparseDone done);
  void DispatchMulti(const core::MultiRequest& request, Clock::time_point deadline,
                     std::function<bool()> is_cancelled, MultiDone done);
  void DispatchChunks(const core::ChunksRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, ChunksDone done);

  // Validates and tokenizes on this thread (UNAVAILABLE when shutting down).
  absl::StatusOr<engine::Encoding> Tokenize(const core::TokenizeRequest& request);
  // Decodes on this thread (UNAVAILABLE when shutting down).
  absl::StatusOr<std::string> Decode(const core::DecodeRequest& request);

  // Answers inputs from `cache` (shared by every model; null: off, the
  // default) under the key of `model` (its served name), coalescing
  // identical inputs in flight (server/core/cache/caching_sink.h). `clock` is
  // the batcher's (a waiter's deadline). Call before the first request; all
  // must outlive the dispatcher.
  void EnableCache(ResultCache* cache, std::string model, Clock* clock);

  // From now on every request is refused with UNAVAILABLE.
  void StopAccepting() { runner_.StopAccepting(); }
  bool accepting() const { return runner_.accepting(); }

 private:
  const InputTokenizer* const inputs_;
  Batcher* const batcher_;
  ServerMetrics* const metrics_;
  BatcherSink batcher_sink_;
  std::unique_ptr<CachingSink> caching_sink_;  // null: the cache is off
  PlanRunner runner_;
};

}  // namespace server::core
