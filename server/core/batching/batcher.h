// Dynamic batcher: one bounded queue for all RPCs and one worker thread that
// packs queued inputs into engine batches under a token budget and an input
// cap, then scatters results back. Knows nothing of gRPC.
//
// Requests are queued input by input (as TEI does), so a request with more
// tokens than one batch holds still runs: its inputs go out in order, and
// its `done` fires once the last one is computed. A batch is cut whenever
// the engine is free and input is queued: a request that arrives at an idle
// engine starts at once, alone. While a batch runs, new requests are
// tokenized on their own threads and queued; when the engine returns, the
// next batch is cut from the queue at once. So inputs gather only while the
// engine is busy: batches grow with the load, and no input waits for company
// while the engine could run it. Cutting is a few pointer moves, so doing it
// then (rather than earlier) costs nothing and lets everything that arrived
// during the run join. Nothing waits for a delay (--max-queue-delay, which
// set one, is accepted and ignored: server_config.h). With
// several models on one engine (engine_turns.h) "free" is this model's
// worker: a batch cut at once then waits for its turn at the engine, and
// what arrives meanwhile joins this model's next batch.
//
// Deadlines (overload): the batcher learns what a batch costs (a fixed part
// plus a part per token, BatchCostModel in request_queue.h, fitted to the
// batches it ran) and uses it twice. At Submit, a request with a deadline is
// refused (RESOURCE_EXHAUSTED) when it could not finish in time behind what is
// already queued: now + the running batch's remaining time + the queued and
// its own tokens' batches > deadline - deadline_margin. Refusing at the door
// costs microseconds on the caller's thread; whatever is admitted can finish
// in time if the estimate holds. When a batch is cut, a request that could no
// longer finish by its deadline in it (the estimate was off, the machine
// slowed down) is dropped with DEADLINE_EXCEEDED instead of being computed
// and answered late, and a batch stops growing where one more input would
// make an earlier member late. Dropped requests are answered on a thread of
// their own, so the engine's thread goes straight on to the next batch.
// max_queue_tokens stays the hard bound on memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/batch_request.h"
#include "server/core/batching/clock.h"

namespace server::core {

class Batcher {
 public:
  // `backend`, `clock` and `observer` (optional) must outlive the batcher.
  Batcher(BatcherConfig config, Backend* backend, Clock* clock,
          BatcherObserver* observer = nullptr);
  ~Batcher();  // Shutdown(), then finishes queued work and joins the worker.

  // Starts the worker. Requests submitted before wait in the queue.
  void Start();

  // Queues a request. Errors, returned at once (and `done` is not called):
  //   INVALID_ARGUMENT   no inputs, an input with no tokens or more than
  //                      max_batch_tokens, or more tokens in all than the
  //                      queue may ever hold (max_queue_tokens);
  //   RESOURCE_EXHAUSTED queued tokens would exceed max_queue_tokens, or the
  //                      request is expected to finish after its deadline
  //                      behind the queued work (see the top of this file);
  //   DEADLINE_EXCEEDED  nothing is queued or running and the request's own
  //                      expected compute does not fit before its deadline;
  //   UNAVAILABLE        after Shutdown.
  // Thread-safe.
  absl::Status Submit(std::unique_ptr<BatchRequest> request);

  // Stops accepting; queued work runs (unless held: see Hold),
  // and running work completes. Thread-safe.
  void Shutdown();
  // Waits until the queue is empty, no batch runs and every dropped request
  // is answered, or `timeout` passes;
  // returns whether it drained. Requests still queued at the timeout are
  // answered UNAVAILABLE (a running batch cannot be interrupted; its
  // requests are answered when it ends). Call after Shutdown.
  bool Drain(Clock::duration timeout);

  // While held, no new batch starts (the running one completes and is
  // answered); requests are still admitted and queued. The server holds the
  // batcher around the start of gRPC's shutdown, so that no answer (which
  // makes a client send its next call) goes out just before the GOAWAY.
  // Thread-safe; the destructor resumes.
  void Hold();
  void Resume();
  // How long ago (on the batcher's clock) a request was last answered by the
  // batcher, and whether a batch runs or answers are being sent now.
  Clock::duration SinceLastAnswer() const;
  bool answering() const;

  int64_t queued_requests() const;
  int64_t queued_tokens() const;
  // The configuration it runs with (its bounds size the parts a big request
  // is split into, server/core/requests/plans.h: PartBounds).
  const BatcherConfig& config() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace server::core
