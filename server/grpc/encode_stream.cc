#include "server/grpc/encode_stream.h"

#include <utility>

#include "server/core/api/refusals.h"
#include "server/grpc/call_deadline.h"
#include "server/grpc/encode_call.h"
#include "server/grpc/status_mapping.h"
#include "server/grpc/wire_format.h"

namespace server {

EncodeStreamReactor::EncodeStreamReactor(grpc::CallbackServerContext* context,
                                         const core::ServedModels* models, core::Clock* clock,
                                         std::function<void(EncodeStreamReactor*)> on_done)
    : context_(context), models_(models), clock_(clock), on_done_(std::move(on_done)) {
  reading_ = true;
  StartRead(&incoming_);
}

bool EncodeStreamReactor::StopReading() {
  common::MutexLock lock(&mu_);
  stopped_by_server_ = true;
  reads_done_ = true;
  return ShouldFinishLocked();
}

void EncodeStreamReactor::OnReadDone(bool ok) {
  SlotIterator slot;
  bool stopped = false;
  bool finish = false;
  grpc::Status final_status;
  {
    common::MutexLock lock(&mu_);
    if (!ok || reads_done_) {
      // Client half-closed or went away, or the server stopped reading: any
      // request read now is dropped (the stream ends with UNAVAILABLE).
      reading_ = false;
      reads_done_ = true;
      stopped = true;
      finish = ShouldFinishLocked();
      if (finish) final_status = FinalStatusLocked();
    } else {
      // reading_ stays true while incoming_ is being handled, so that
      // OnWriteDone does not start a read into it.
      slots_.emplace_back();
      slot = std::prev(slots_.end());
      slot->received = std::chrono::steady_clock::now();
    }
  }
  if (stopped) {
    // Never call into gRPC under mu_: OnDone may follow and delete us.
    if (finish) Finish(final_status);
    return;
  }
  // Not under mu_: answering at once (a refused request) takes mu_.
  encoder::v1::EncodeRequest request;
  absl::Status parsed = ParseRequest(incoming_, &request);
  slot->id = request.id();  // when unparsable, the id if it came before the fault
  absl::StatusOr<const core::ModelRoute*> route = absl::InternalError("unset");
  if (parsed.ok()) {
    route = models_->Resolve(request.model());
    parsed = route.status();
  }
  slot->metrics = route.ok() ? (*route)->metrics : models_->first().metrics;
  slot->metrics->RequestStarted();
  if (parsed.ok()) {
    // The same core call and conversions as the unary Encode.
    DispatchEncode(
        **route, request, DeadlineOnClock(context_->deadline(), clock_),
        [this] { return cancelled_.load(); },
        [this, slot](absl::StatusOr<EncodedOutputs> outputs) {
          OnAnswered(slot, outputs.ok() ? ToProto(*std::move(outputs), &slot->response)
                                        : outputs.status());
        });
  } else {
    OnAnswered(slot, parsed);
  }

  bool read_again = false;
  {
    common::MutexLock lock(&mu_);
    if (!reads_done_ && static_cast<int>(slots_.size()) < kMaxInFlight) {
      read_again = true;
    } else {
      // Paused at the cap (OnWriteDone resumes) or stopped by the server.
      reading_ = false;
      finish = ShouldFinishLocked();
      if (finish) final_status = FinalStatusLocked();
    }
  }
  if (read_again) StartRead(&incoming_);
  if (finish) Finish(final_status);
}

void EncodeStreamReactor::OnAnswered(SlotIterator slot, absl::Status status) {
  if (status.ok()) status = SerializeResponse(slot->response, &slot->bytes);
  if (!status.ok()) {
    slot->response.Clear();
    slot->response.set_id(slot->id);
    *slot->response.mutable_error() = ToProtoError(status);
    SerializeResponse(slot->response, &slot->bytes).IgnoreError();
    slot->code = ToGrpcCode(status.code());
  }
  {
    common::MutexLock lock(&mu_);
    to_write_.push_back(slot);
    if (writing_) return;
    writing_ = true;
  }
  StartWrite(&slot->bytes);
}

void EncodeStreamReactor::OnWriteDone(bool ok) {
  const grpc::ByteBuffer* next = nullptr;
  bool read_again = false;
  bool finish = false;
  grpc::Status final_status;
  {
    common::MutexLock lock(&mu_);
    // A failed write: the client is gone and never saw the response.
    to_write_.front()->metrics->RequestFinished(
        core::Transport::kGrpc, core::Rpc::kEncodeStream,
        ToAbslCode(ok ? to_write_.front()->code : grpc::StatusCode::CANCELLED),
        std::chrono::steady_clock::now() - to_write_.front()->received);
    slots_.erase(to_write_.front());
    to_write_.pop_front();
    // A failed write means the client is gone: stop reading; the remaining
    // writes fail quickly and let the stream finish.
    if (!ok) reads_done_ = true;
    if (!to_write_.empty()) {
      next = &to_write_.front()->bytes;
    } else {
      writing_ = false;
    }
    // The read paused at kMaxInFlight resumes now that a slot is free.
    if (!reading_ && !reads_done_ && static_cast<int>(slots_.size()) < kMaxInFlight) {
      reading_ = read_again = true;
    }
    finish = ShouldFinishLocked();
    if (finish) final_status = FinalStatusLocked();
  }
  if (next != nullptr) StartWrite(next);
  if (read_again) StartRead(&incoming_);
  if (finish) Finish(final_status);
}

bool EncodeStreamReactor::ShouldFinishLocked() {
  if (finished_ || !reads_done_ || !slots_.empty() || writing_) return false;
  // A read may still be outstanding after a server stop; Finish ends it.
  finished_ = true;
  return true;
}

grpc::Status EncodeStreamReactor::FinalStatusLocked() const {
  if (stopped_by_server_) return ToGrpcStatus(core::ShuttingDown());
  return grpc::Status::OK;
}

void EncodeStreamReactor::OnDone() {
  on_done_(this);
  delete this;
}

}  // namespace server
