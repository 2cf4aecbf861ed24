#include "server/grpc/encode_service.h"

#include <chrono>
#include <memory>
#include <vector>

#include "server/grpc/call_deadline.h"
#include "server/grpc/metered_reactor.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/quantized_outputs.h"
#include "server/grpc/status_mapping.h"
#include "server/grpc/wire_format.h"

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

const absl::Status& Unauthenticated() {
  static const absl::Status* const status = new absl::Status(absl::UnauthenticatedError(
      "a valid API key is needed: send the metadata authorization: Bearer KEY"));
  return *status;
}

}  // namespace

namespace {

absl::string_view Authorization(grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

}  // namespace

bool EncodeService::Authorized(grpc::CallbackServerContext* context) const {
  return models_->KeyAccepted(Authorization(context));
}

absl::Status EncodeService::Admit(grpc::CallbackServerContext* context) const {
  return models_->Admit(Authorization(context));
}

absl::StatusOr<const ModelRoute*> EncodeService::Route(const std::string& name,
                                                       MeteredUnaryReactor* reactor) const {
  absl::StatusOr<const ModelRoute*> route = models_->Resolve(name);
  if (route.ok()) reactor->MeterAs((*route)->metrics);
  return route;
}

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
  for (EncodeStreamReactor* stream : to_finish) stream->Finish(ToGrpcStatus(ShuttingDown()));
}

grpc::ServerUnaryReactor* EncodeService::Encode(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request_bytes,
                                                grpc::ByteBuffer* response_bytes) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kEncode, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  encoder::v1::EncodeRequest request;
  if (absl::Status status = ParseRequest(*request_bytes, &request); !status.ok()) {
    reactor->Answer(ToGrpcStatus(status));
    return reactor;
  }
  absl::StatusOr<const ModelRoute*> route = Route(request.model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  absl::StatusOr<core::EncodeRequest> core_request = ToCore(request);
  if (!core_request.ok()) {
    reactor->Answer(ToGrpcStatus(core_request.status()));
    return reactor;
  }
  absl::StatusOr<core::EmbeddingType> type = EmbeddingTypeOf(request, (*route)->description);
  if (!type.ok()) {
    reactor->Answer(ToGrpcStatus(type.status()));
    return reactor;
  }
  (*route)->dispatcher->Dispatch(
      *core_request, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, id = request.id(), response_bytes, type = *type,
       model = &(*route)->description](absl::StatusOr<core::EncodeResult> result) {
        absl::Status status = result.status();
        if (status.ok()) {
          encoder::v1::EncodeResponse response;
          FillEncodeResponse(id, result->pooling, result->outputs, &response);
          SetWindows(result->windows, &response);
          status = QuantizeOutputs(type, *model, &response);
          if (status.ok()) status = SerializeResponse(response, response_bytes);
        }
        reactor->Answer(ToGrpcStatus(status));
      });
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeService::EncodeStream(
    grpc::CallbackServerContext* context) {
  if (!Authorized(context)) {
    // Counted as one refused request of the stream.
    metrics_->RequestStarted();
    metrics_->RequestFinished(core::Transport::kGrpc, Rpc::kEncodeStream,
                              absl::StatusCode::kUnauthenticated, std::chrono::nanoseconds(0));
    return new RefusedStream(Unauthenticated());
  }
  common::MutexLock lock(&streams_mu_);
  if (!accepting_) return new RefusedStream(ShuttingDown());
  auto* stream =
      new EncodeStreamReactor(context, models_, clock_, [this](EncodeStreamReactor* done) {
        common::MutexLock lock(&streams_mu_);
        streams_.erase(done);
      });
  streams_.insert(stream);
  return stream;
}

grpc::ServerUnaryReactor* EncodeService::Tokenize(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* request_bytes,
                                                  grpc::ByteBuffer* response_bytes) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kTokenize, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  encoder::v1::TokenizeRequest request;
  absl::Status status = ParseRequest(*request_bytes, &request);
  absl::StatusOr<const ModelRoute*> route = absl::InternalError("unset");
  if (status.ok()) {
    route = Route(request.model(), reactor);
    status = route.status();
  }
  if (status.ok()) {
    absl::StatusOr<core::TokenizeRequest> core_request = ToCore(request);
    absl::StatusOr<engine::Encoding> encoding =
        core_request.ok() ? (*route)->dispatcher->Tokenize(*core_request)
                          : absl::StatusOr<engine::Encoding>(core_request.status());
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
    grpc::CallbackServerContext* context, const encoder::v1::GetModelInfoRequest* request,
    encoder::v1::ModelInfo* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kGetModelInfo, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  *response = MakeModelInfo((*route)->description);
  reactor->Answer(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::ListModels(
    grpc::CallbackServerContext* context, const encoder::v1::ListModelsRequest* /*request*/,
    encoder::v1::ListModelsResponse* response) {
  // Counted as GetModelInfo (the metrics' RPC list is fixed), under the
  // first model.
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kGetModelInfo, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  for (const ModelRoute& route : models_->routes()) {
    *response->add_models() = MakeModelInfo(route.description);
  }
  reactor->Answer(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::Decode(grpc::CallbackServerContext* context,
                                                const encoder::v1::DecodeRequest* request,
                                                encoder::v1::DecodeResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kDecode, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  core::DecodeRequest decode;
  decode.ids.assign(request->ids().begin(), request->ids().end());
  decode.skip_special_tokens = !request->keep_special_tokens();
  absl::StatusOr<std::string> text = (*route)->dispatcher->Decode(decode);
  if (text.ok()) response->set_text(*std::move(text));
  reactor->Answer(ToGrpcStatus(text.status()));
  return reactor;
}

}  // namespace server
