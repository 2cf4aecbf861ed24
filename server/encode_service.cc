#include "server/encode_service.h"

#include <chrono>
#include <memory>
#include <vector>

#include "server/call_deadline.h"
#include "server/metered_reactor.h"
#include "server/proto_conversions.h"
#include "server/status_mapping.h"
#include "server/wire_format.h"

namespace server {
namespace {

const absl::Status& ShuttingDown() {
  static const absl::Status* const status =
      new absl::Status(absl::UnavailableError("server is shutting down"));
  return *status;
}

// A stream refused at its start: finishes at once and frees itself.
class RefusedStream : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit RefusedStream(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

void EncodeService::StopAccepting() {
  dispatcher_->StopAccepting();
  std::vector<EncodeStreamReactor*> to_finish;
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    accepting_ = false;
    // Under streams_mu_ no stream can be deleted (OnDone unregisters first).
    for (EncodeStreamReactor* stream : streams_) {
      if (stream->StopReading()) to_finish.push_back(stream);
    }
  }
  // These have nothing in flight and were marked finished: only we finish
  // them, and they stay alive until we do.
  for (EncodeStreamReactor* stream : to_finish) stream->Finish(ToGrpcStatus(ShuttingDown()));
}

grpc::ServerUnaryReactor* EncodeService::Encode(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request_bytes,
                                                grpc::ByteBuffer* response_bytes) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kEncode, metrics_);
  encoder::v1::EncodeRequest request;
  if (absl::Status status = ParseRequest(*request_bytes, &request); !status.ok()) {
    reactor->Answer(ToGrpcStatus(status));
    return reactor;
  }
  // Lives in the batcher's callback until the outputs are in.
  auto response = std::make_shared<encoder::v1::EncodeResponse>();
  dispatcher_->Dispatch(
      request, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); }, response.get(),
      [reactor, response, response_bytes](absl::Status status) {
        if (status.ok()) status = SerializeResponse(*response, response_bytes);
        reactor->Answer(ToGrpcStatus(status));
      });
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeService::EncodeStream(
    grpc::CallbackServerContext* context) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  if (!accepting_) return new RefusedStream(ShuttingDown());
  auto* stream = new EncodeStreamReactor(context, dispatcher_, clock_, metrics_,
                                         [this](EncodeStreamReactor* done) {
                                           std::lock_guard<std::mutex> lock(streams_mu_);
                                           streams_.erase(done);
                                         });
  streams_.insert(stream);
  return stream;
}

grpc::ServerUnaryReactor* EncodeService::Tokenize(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* request_bytes,
                                                  grpc::ByteBuffer* response_bytes) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kTokenize, metrics_);
  if (!dispatcher_->accepting()) {
    reactor->Answer(ToGrpcStatus(ShuttingDown()));
    return reactor;
  }
  encoder::v1::TokenizeRequest request;
  absl::Status status = ParseRequest(*request_bytes, &request);
  if (status.ok()) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<engine::Encoding> encoding = builder_->Tokenize(request);
    metrics_->Tokenized(std::chrono::steady_clock::now() - start);
    status = encoding.status();
    if (status.ok()) {
      encoder::v1::TokenizeResponse response;
      FillTokenizeResponse(*encoding, &response);
      status = SerializeResponse(response, response_bytes);
    }
  }
  reactor->Answer(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::GetModelInfo(
    grpc::CallbackServerContext* context, const encoder::v1::GetModelInfoRequest* /*request*/,
    encoder::v1::ModelInfo* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kGetModelInfo, metrics_);
  if (!dispatcher_->accepting()) {
    reactor->Answer(ToGrpcStatus(ShuttingDown()));
    return reactor;
  }
  *response = model_info_;
  reactor->Answer(grpc::Status::OK);
  return reactor;
}

}  // namespace server
