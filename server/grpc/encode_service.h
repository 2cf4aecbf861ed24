// The encoder.v1.Encoder service on gRPC's callback API. Every method reads
// raw bytes (wire_format.h: one UTF-8 rule for every request); a unary method
// is its conversion pair and its core call through UnaryCalls (unary_call.h),
// answered from the batcher's thread or at once. With API keys on, a call
// without a valid `authorization: Bearer KEY` is answered UNAUTHENTICATED
// (health and reflection are other services and stay open). Every call (every
// request of a stream) is reported to the metrics when its response has been
// sent.
#pragma once

#include <set>

#include <grpcpp/grpcpp.h>

#include "common/mutex.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "server/core/batching/clock.h"
#include "server/core/model_set.h"
#include "server/grpc/encode_stream.h"
#include "server/grpc/unary_call.h"

namespace server {

// WithMethods<Service, M1, M2, ...>::type is M1<M2<...<Service>>>: gRPC's
// generated service with each method's mixin applied, written one a line.
template <typename Service, template <class> class... Methods>
struct WithMethods {
  using type = Service;
};
template <typename Service, template <class> class First, template <class> class... Rest>
struct WithMethods<Service, First, Rest...> {
  using type = First<typename WithMethods<Service, Rest...>::type>;
};

// Every method raw (wire_format.h).
using EncoderServiceBase =
    WithMethods<encoder::v1::Encoder::Service,  //
                encoder::v1::Encoder::WithRawCallbackMethod_Encode,
                encoder::v1::Encoder::WithRawCallbackMethod_EncodeStream,
                encoder::v1::Encoder::WithRawCallbackMethod_Tokenize,
                encoder::v1::Encoder::WithRawCallbackMethod_Decode,
                encoder::v1::Encoder::WithRawCallbackMethod_GetModelInfo,
                encoder::v1::Encoder::WithRawCallbackMethod_ListModels,
                encoder::v1::Encoder::WithRawCallbackMethod_Rerank,
                encoder::v1::Encoder::WithRawCallbackMethod_Classify,
                encoder::v1::Encoder::WithRawCallbackMethod_EncodeSparse,
                encoder::v1::Encoder::WithRawCallbackMethod_EncodeMulti,
                encoder::v1::Encoder::WithRawCallbackMethod_EncodeChunks>::type;

class EncodeService final : public EncoderServiceBase {
 public:
  // All pointers must outlive the service. Each request goes to the model
  // its `model` field names (ServedModels::Resolve); a call refused before
  // its model is known is counted under the first model.
  EncodeService(core::ServedModels* models, core::Clock* clock)
      : models_(models), clock_(clock), unary_(models, clock) {}

  // Shutdown: every new call and every new request on an open stream gets
  // UNAVAILABLE; open streams end once their requests are answered.
  void StopAccepting() ABSL_LOCKS_EXCLUDED(streams_mu_);

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeStream(
      grpc::CallbackServerContext* context) ABSL_LOCKS_EXCLUDED(streams_mu_) override;

  using Bytes = grpc::ByteBuffer;
  grpc::ServerUnaryReactor* Encode(grpc::CallbackServerContext* context, const Bytes* request,
                                   Bytes* response) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context, const Bytes* request,
                                     Bytes* response) override;
  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context, const Bytes* request,
                                   Bytes* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context, const Bytes* request,
                                         Bytes* response) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context, const Bytes* request,
                                       Bytes* response) override;
  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context, const Bytes* request,
                                   Bytes* response) override;
  grpc::ServerUnaryReactor* Classify(grpc::CallbackServerContext* context, const Bytes* request,
                                     Bytes* response) override;
  grpc::ServerUnaryReactor* EncodeSparse(grpc::CallbackServerContext* context, const Bytes* request,
                                         Bytes* response) override;
  grpc::ServerUnaryReactor* EncodeMulti(grpc::CallbackServerContext* context, const Bytes* request,
                                        Bytes* response) override;
  grpc::ServerUnaryReactor* EncodeChunks(grpc::CallbackServerContext* context, const Bytes* request,
                                         Bytes* response) override;

 private:
  core::ServedModels* const models_;
  core::Clock* const clock_;
  UnaryCalls unary_;

  common::Mutex streams_mu_;
  std::set<EncodeStreamReactor*> streams_ ABSL_GUARDED_BY(streams_mu_);  // open streams
  bool accepting_ ABSL_GUARDED_BY(streams_mu_) = true;
};

}  // namespace server
