// The service's entry point for every transport: an encode request is
// validated and tokenized on the calling thread, queued on the batcher, and
// answered from the batcher's thread; a tokenize request is answered at once.
// Plain C++ types in and out (service_types.h); the gRPC and HTTP adapters
// convert their wire formats, so requests from both share the queue and can
// share a batch.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/batcher.h"
#include "server/core/batching/clock.h"
#include "server/core/cache/result_cache.h"
#include "server/core/metrics/metrics.h"
#include "server/core/requests/late_chunking.h"
#include "server/core/requests/request_builder.h"

namespace server {

// The result cache's side of EncodeDispatcher (cached_dispatch.cc): submits
// `request` through `route`'s cache; calls its `done` exactly once.
struct CachedRoute;
void SubmitCached(const std::shared_ptr<const CachedRoute>& route,
                  std::unique_ptr<BatchRequest> request);

class EncodeDispatcher {
 public:
  using Done = std::function<void(absl::StatusOr<core::EncodeResult>)>;

  // All pointers must outlive the dispatcher.
  EncodeDispatcher(const RequestBuilder* builder, Batcher* batcher, ServerMetrics* metrics)
      : builder_(builder), batcher_(batcher), metrics_(metrics) {}

  // Calls `done` exactly once: at once (on this thread) when the request is
  // refused or every input is a cache hit, else later from the batcher's
  // thread. Keeps no reference to `request` after returning. `is_cancelled`
  // may be empty. Errors: INVALID_ARGUMENT (the message names the input),
  // RESOURCE_EXHAUSTED (queue full), DEADLINE_EXCEEDED, CANCELLED,
  // UNAVAILABLE (shutting down).
  void Dispatch(const core::EncodeRequest& request, Clock::time_point deadline,
                std::function<bool()> is_cancelled, Done done);

  // The head requests, answered like Dispatch (same queue and batches as
  // every other request). Besides Dispatch's errors: FAILED_PRECONDITION when
  // the model lacks the head. A rerank request runs as parts of at most one
  // batch (and the per-request limits) each, submitted one after another, so
  // it may hold more texts than any of those bounds (up to max_rerank_texts).
  using ClassifyDone = std::function<void(absl::StatusOr<core::ClassifyResult>)>;
  using RerankDone = std::function<void(absl::StatusOr<core::RerankResult>)>;
  using SparseDone = std::function<void(absl::StatusOr<core::SparseResult>)>;
  void DispatchClassify(const core::ClassifyRequest& request, Clock::time_point deadline,
                        std::function<bool()> is_cancelled, ClassifyDone done);
  void DispatchRerank(const core::RerankRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, RerankDone done);
  void DispatchSparse(const core::SparseRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, SparseDone done);
  using MultiDone = std::function<void(absl::StatusOr<core::MultiResult>)>;
  void DispatchMulti(const core::MultiRequest& request, Clock::time_point deadline,
                     std::function<bool()> is_cancelled, MultiDone done);

  // Late chunking (server/core/requests/late_chunking.h): the text's windows run as
  // one request on the shared queue (pooling NONE), then each chunk's vector
  // is pooled from their stitched token states on the batcher's thread.
  // Errors as Dispatch's; INVALID_ARGUMENT names the chunk ("chunks[2]: ...").
  // Defined in chunk_dispatch.cc.
  using ChunksDone = std::function<void(absl::StatusOr<core::ChunksResult>)>;
  void DispatchChunks(const core::ChunksRequest& request, Clock::time_point deadline,
                      std::function<bool()> is_cancelled, ChunksDone done);

  // Window mode (server/core/requests/long_inputs.h): Dispatch's path for a request
  // whose too-long inputs run as windows, pooled on the batcher's thread.
  // Defined in long_input_dispatch.cc.
  void DispatchWindowed(const core::EncodeRequest& request, Clock::time_point deadline,
                        std::function<bool()> is_cancelled, Done done);

  // Validates and tokenizes on this thread (UNAVAILABLE when shutting down).
  absl::StatusOr<engine::Encoding> Tokenize(const core::TokenizeRequest& request);
  // Decodes on this thread (UNAVAILABLE when shutting down).
  absl::StatusOr<std::string> Decode(const core::DecodeRequest& request);

  // Answers inputs from `cache` (shared by every model; null: off, the
  // default) under the key of `model` (its served name), coalescing
  // identical inputs in flight: cached_dispatch.cc. `clock` is the batcher's
  // (a waiter's deadline). Call before the first request; all must outlive
  // the dispatcher.
  void EnableCache(ResultCache* cache, std::string model, Clock* clock);

  // From now on every request is refused with UNAVAILABLE.
  void StopAccepting() { accepting_ = false; }
  bool accepting() const { return accepting_; }

 private:
  using OutputsDone = std::function<void(absl::StatusOr<std::vector<InputOutput>>)>;
  // Submits `request` to the batcher, through the cache when it is on; calls
  // its `done` exactly once in every case (a refusal included).
  void Submit(std::unique_ptr<BatchRequest> request);
  // The inputs and tokens of a request's answered outputs, to the metrics.
  static void CountEncoded(ServerMetrics* metrics, const std::vector<InputOutput>& outputs);
  // Submits `parts` one after another (the next when the previous is
  // answered) and calls `done` once with all their outputs in order.
  void SubmitParts(std::vector<std::unique_ptr<BatchRequest>> parts, Clock::time_point deadline,
                   std::function<bool()> is_cancelled, OutputsDone done);
  // A head request: refused when shutting down, else `build` makes its
  // parts on this thread (timed as tokenization) and they run in turn;
  // `done` gets to_result(outputs), or the first error.
  template <typename Result, typename Build, typename ToResult>
  void DispatchParts(Build build, Clock::time_point deadline, std::function<bool()> is_cancelled,
                     std::function<void(absl::StatusOr<Result>)> done, ToResult to_result);

  const RequestBuilder* const builder_;
  Batcher* const batcher_;
  ServerMetrics* const metrics_;
  std::atomic<bool> accepting_{true};
  std::shared_ptr<const CachedRoute> cache_;  // null: the cache is off
};

}  // namespace server
