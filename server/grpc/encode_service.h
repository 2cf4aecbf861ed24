// The encoder.v1.Encoder service on gRPC's callback API. Handlers validate
// and tokenize on the gRPC thread that calls them and return a reactor; the
// batcher's thread finishes it when the outputs are ready. The methods that
// carry text read raw bytes (see wire_format.h). With API keys on, a call
// without a valid `authorization: Bearer KEY` is answered UNAUTHENTICATED
// (health and reflection are other services and stay open). Every call (every request
// of a stream) is reported to the metrics when its response has been sent.
#pragma once

#include <set>

#include <grpcpp/grpcpp.h>

#include "common/mutex.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/clock.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/grpc/encode_stream.h"
#include "server/grpc/metered_reactor.h"

namespace server {

using EncoderServiceBase = encoder::v1::Encoder::WithRawCallbackMethod_Encode<
    encoder::v1::Encoder::WithRawCallbackMethod_EncodeStream<
        encoder::v1::Encoder::WithRawCallbackMethod_Tokenize<
            encoder::v1::Encoder::WithCallbackMethod_GetModelInfo<
                encoder::v1::Encoder::WithCallbackMethod_ListModels<
                    encoder::v1::Encoder::WithCallbackMethod_Decode<
                        encoder::v1::Encoder::WithCallbackMethod_Rerank<
                            encoder::v1::Encoder::WithCallbackMethod_Classify<
                                encoder::v1::Encoder::WithCallbackMethod_EncodeSparse<
                                    encoder::v1::Encoder::WithCallbackMethod_EncodeMulti<
                                        encoder::v1::Encoder::WithCallbackMethod_EncodeChunks<
                                            encoder::v1::Encoder::Service>>>>>>>>>>>;

class EncodeService final : public EncoderServiceBase {
 public:
  // All pointers must outlive the service. Each request goes to the model
  // its `model` field names (ServedModels::Resolve); a call refused before
  // its model is known is counted under the first model.
  EncodeService(ServedModels* models, Clock* clock)
      : models_(models), clock_(clock), metrics_(models->first().metrics) {}

  // Shutdown: every new call and every new request on an open stream gets
  // UNAVAILABLE; open streams end once their requests are answered.
  void StopAccepting() ABSL_LOCKS_EXCLUDED(streams_mu_);

  grpc::ServerUnaryReactor* Encode(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeStream(
      grpc::CallbackServerContext* context) ABSL_LOCKS_EXCLUDED(streams_mu_) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const encoder::v1::GetModelInfoRequest* request,
                                         encoder::v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const encoder::v1::ListModelsRequest* request,
                                       encoder::v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context,
                                   const encoder::v1::DecodeRequest* request,
                                   encoder::v1::DecodeResponse* response) override;
  // head_rpcs.cc: the head requests, on the shared queue.
  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context,
                                   const encoder::v1::RerankRequest* request,
                                   encoder::v1::RerankResponse* response) override;
  grpc::ServerUnaryReactor* Classify(grpc::CallbackServerContext* context,
                                     const encoder::v1::ClassifyRequest* request,
                                     encoder::v1::ClassifyResponse* response) override;
  grpc::ServerUnaryReactor* EncodeSparse(grpc::CallbackServerContext* context,
                                         const encoder::v1::EncodeSparseRequest* request,
                                         encoder::v1::EncodeSparseResponse* response) override;
  grpc::ServerUnaryReactor* EncodeMulti(grpc::CallbackServerContext* context,
                                        const encoder::v1::EncodeMultiRequest* request,
                                        encoder::v1::EncodeMultiResponse* response) override;
  // chunk_rpcs.cc: late chunking, on the shared queue.
  grpc::ServerUnaryReactor* EncodeChunks(grpc::CallbackServerContext* context,
                                         const encoder::v1::EncodeChunksRequest* request,
                                         encoder::v1::EncodeChunksResponse* response) override;

 private:
  // Whether the call carries a valid key in its `authorization` metadata.
  bool Authorized(grpc::CallbackServerContext* context) const;
  // A unary call's admission: UNAUTHENTICATED without a valid key,
  // UNAVAILABLE once the server stops accepting, else OK.
  absl::Status Admit(grpc::CallbackServerContext* context) const;

  // The model `name` names, its metrics now counting `reactor`'s call.
  absl::StatusOr<const ModelRoute*> Route(const std::string& name,
                                          MeteredUnaryReactor* reactor) const;

  ServedModels* const models_;
  Clock* const clock_;
  ServerMetrics* const metrics_;

  common::Mutex streams_mu_;
  std::set<EncodeStreamReactor*> streams_ ABSL_GUARDED_BY(streams_mu_);  // open streams
  bool accepting_ ABSL_GUARDED_BY(streams_mu_) = true;
};

}  // namespace server
