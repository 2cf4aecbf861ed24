// EncodeStream: one reactor per bidirectional stream. Each request read (as
// raw bytes, see wire_format.h) is dispatched at once; responses are written as their batches
// finish, so they may leave out of order (each carries its request's id). A request that fails gets
// a response with `error` set and the stream goes on. The metrics count each
// request of a stream, from its read to its response's write.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <string>

#include <grpcpp/grpcpp.h>

#include "common/mutex.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/batching/clock.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"

namespace server {

class EncodeStreamReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Requests read but not yet answered and written; beyond it the stream
  // stops reading until one is written (flow control towards the client).
  static constexpr int kMaxInFlight = 32;

  // `on_done` runs last, just before the reactor deletes itself. `models`
  // must outlive the stream; each request goes to the model it names.
  EncodeStreamReactor(grpc::CallbackServerContext* context, const core::ServedModels* models,
                      core::Clock* clock, std::function<void(EncodeStreamReactor*)> on_done);

  // Server shutdown: read no more requests. Returns true when the caller must
  // now call Finish(UNAVAILABLE) (nothing is in flight); otherwise the stream
  // finishes itself once its requests are answered.
  bool StopReading() ABSL_LOCKS_EXCLUDED(mu_);

  void OnReadDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_) override;
  void OnWriteDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_) override;
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override;

 private:
  // One request's response, from dispatch until it is written.
  struct Slot {
    std::string id;
    encoder::v1::EncodeResponse response;  // filled by the batcher's callback
    grpc::ByteBuffer bytes;                // what is written
    std::chrono::steady_clock::time_point received;
    grpc::StatusCode code = grpc::StatusCode::OK;  // the request's own, set when answered
    core::ServerMetrics* metrics = nullptr;  // its model's (the first model's when it named none)
  };
  using SlotIterator = std::list<Slot>::iterator;

  void OnAnswered(SlotIterator slot, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the stream is done: no more reads and nothing left to write.
  // Marks it finished; the caller then calls Finish outside the lock.
  bool ShouldFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  grpc::Status FinalStatusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  grpc::CallbackServerContext* const context_;
  const core::ServedModels* const models_;
  core::Clock* const clock_;
  const std::function<void(EncodeStreamReactor*)> on_done_;
  std::atomic<bool> cancelled_{false};

  grpc::ByteBuffer incoming_;  // the read target; one read at a time
  // The list and queue are guarded; a Slot itself is not: it is filled by
  // one thread at a time (the reader, then the batcher's callback, then the
  // writer), handed on through to_write_ under mu_.
  common::Mutex mu_;
  std::list<Slot> slots_ ABSL_GUARDED_BY(mu_);              // stable addresses for the batcher
  std::deque<SlotIterator> to_write_ ABSL_GUARDED_BY(mu_);  // answered, in answer order
  bool reading_ ABSL_GUARDED_BY(mu_) = false;               // a read is outstanding
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;            // client half-closed, or shutdown
  bool stopped_by_server_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;   // a write is outstanding
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish called or about to be
};

}  // namespace server
