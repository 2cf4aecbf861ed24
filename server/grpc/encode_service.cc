#include "server/grpc/encode_service.h"

#include <chrono>
#include <vector>

#include "server/core/api/refusals.h"

namespace server {
namespace {

namespace v1 = encoder::v1;

// A stream refused at its start: finishes at once and frees itself.
class RefusedStream : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit RefusedStream(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

void EncodeService::StopAccepting() {
  models_->StopAccepting();
  std::vector<EncodeStreamReactor*> to_finish;
  {
    common::MutexLock lock(&streams_mu_);
    accepting_ = false;
    // Under streams_mu_ no stream can be deleted (OnDone unregisters first).
    for (EncodeStreamReactor* stream : streams_) {
      if (stream->StopReading()) to_finish.push_back(stream);
    }
  }
  // These have nothing in flight and were marked finished: only we finish
  // them, and they stay alive until we do.
  for (EncodeStreamReactor* stream : to_finish) stream->Finish(ToGrpcStatus(core::ShuttingDown()));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeService::EncodeStream(
    grpc::CallbackServerContext* context) {
  if (!models_->KeyAccepted(Authorization(context))) {
    // Counted as one refused request of the stream.
    core::ServerMetrics* metrics = models_->first().metrics;
    metrics->RequestStarted();
    metrics->RequestFinished(core::Transport::kGrpc, core::Rpc::kEncodeStream,
                             absl::StatusCode::kUnauthenticated, std::chrono::nanoseconds(0));
    return new RefusedStream(core::Unauthenticated(kHowToSendKey));
  }
  common::MutexLock lock(&streams_mu_);
  if (!accepting_) return new RefusedStream(core::ShuttingDown());
  auto* stream =
      new EncodeStreamReactor(context, models_, clock_, [this](EncodeStreamReactor* done) {
        common::MutexLock lock(&streams_mu_);
        streams_.erase(done);
      });
  streams_.insert(stream);
  return stream;
}

grpc::ServerUnaryReactor* EncodeService::Encode(grpc::CallbackServerContext* context,
                                                const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::EncodeRequest, v1::EncodeResponse>(context, core::Rpc::kEncode, request,
                                                             response, DispatchEncode);
}

grpc::ServerUnaryReactor* EncodeService::Tokenize(grpc::CallbackServerContext* context,
                                                  const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::TokenizeRequest, v1::TokenizeResponse>(
      context, core::Rpc::kTokenize, request, response, &core::EncodeDispatcher::Tokenize);
}

grpc::ServerUnaryReactor* EncodeService::Decode(grpc::CallbackServerContext* context,
                                                const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::DecodeRequest, v1::DecodeResponse>(
      context, core::Rpc::kDecode, request, response, &core::EncodeDispatcher::Decode);
}

grpc::ServerUnaryReactor* EncodeService::GetModelInfo(grpc::CallbackServerContext* context,
                                                      const Bytes* request, Bytes* response) {
  return unary_.Start<v1::GetModelInfoRequest, v1::ModelInfo>(
      context, core::Rpc::kGetModelInfo, request, response, [this](auto* call) {
        if (const core::ModelRoute* model = unary_.Route(call)) {
          call->response = MakeModelInfo(model->description);
          call->Reply(absl::OkStatus());
        }
      });
}

grpc::ServerUnaryReactor* EncodeService::ListModels(grpc::CallbackServerContext* context,
                                                    const Bytes* request, Bytes* response) {
  // Counted as GetModelInfo (the metrics' RPC list is fixed), under the
  // first model.
  return unary_.Start<v1::ListModelsRequest, v1::ListModelsResponse>(
      context, core::Rpc::kGetModelInfo, request, response, [this](auto* call) {
        for (const core::ModelRoute& model : models_->routes()) {
          *call->response.add_models() = MakeModelInfo(model.description);
        }
        call->Reply(absl::OkStatus());
      });
}

grpc::ServerUnaryReactor* EncodeService::Rerank(grpc::CallbackServerContext* context,
                                                const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::RerankRequest, v1::RerankResponse>(
      context, core::Rpc::kRerank, request, response, &core::EncodeDispatcher::DispatchRerank);
}

grpc::ServerUnaryReactor* EncodeService::Classify(grpc::CallbackServerContext* context,
                                                  const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::ClassifyRequest, v1::ClassifyResponse>(
      context, core::Rpc::kClassify, request, response, &core::EncodeDispatcher::DispatchClassify);
}

grpc::ServerUnaryReactor* EncodeService::EncodeSparse(grpc::CallbackServerContext* context,
                                                      const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::EncodeSparseRequest, v1::EncodeSparseResponse>(
      context, core::Rpc::kEncodeSparse, request, response,
      &core::EncodeDispatcher::DispatchSparse);
}

grpc::ServerUnaryReactor* EncodeService::EncodeMulti(grpc::CallbackServerContext* context,
                                                     const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::EncodeMultiRequest, v1::EncodeMultiResponse>(
      context, core::Rpc::kEncodeMulti, request, response, &core::EncodeDispatcher::DispatchMulti);
}

grpc::ServerUnaryReactor* EncodeService::EncodeChunks(grpc::CallbackServerContext* context,
                                                      const Bytes* request, Bytes* response) {
  return unary_.Serve<v1::EncodeChunksRequest, v1::EncodeChunksResponse>(
      context, core::Rpc::kEncodeChunks, request, response,
      &core::EncodeDispatcher::DispatchChunks);
}

}  // namespace server
