// The encoder.v1.Encoder service on gRPC's callback API. Handlers validate
// and tokenize on the gRPC thread that calls them and return a reactor; the
// batcher's thread finishes it when the outputs are ready. The methods that
// carry text read raw bytes (see wire_format.h). Every call (every request
// of a stream) is reported to the metrics when its response has been sent.
#pragma once

#include <mutex>
#include <set>

#include <grpcpp/grpcpp.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "server/clock.h"
#include "server/encode_dispatcher.h"
#include "server/encode_stream.h"
#include "server/metrics.h"
#include "server/request_builder.h"

namespace server {

using EncoderServiceBase = encoder::v1::Encoder::WithRawCallbackMethod_Encode<
    encoder::v1::Encoder::WithRawCallbackMethod_EncodeStream<
        encoder::v1::Encoder::WithRawCallbackMethod_Tokenize<
            encoder::v1::Encoder::WithCallbackMethod_GetModelInfo<encoder::v1::Encoder::Service>>>>;

class EncodeService final : public EncoderServiceBase {
 public:
  // All pointers must outlive the service.
  EncodeService(const RequestBuilder* builder, EncodeDispatcher* dispatcher,
                encoder::v1::ModelInfo model_info, Clock* clock, ServerMetrics* metrics)
      : builder_(builder),
        dispatcher_(dispatcher),
        model_info_(std::move(model_info)),
        clock_(clock),
        metrics_(metrics) {}

  // Shutdown: every new call and every new request on an open stream gets
  // UNAVAILABLE; open streams end once their requests are answered.
  void StopAccepting();

  grpc::ServerUnaryReactor* Encode(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EncodeStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const encoder::v1::GetModelInfoRequest* request,
                                         encoder::v1::ModelInfo* response) override;

 private:
  const RequestBuilder* const builder_;
  EncodeDispatcher* const dispatcher_;
  const encoder::v1::ModelInfo model_info_;
  Clock* const clock_;
  ServerMetrics* const metrics_;

  std::mutex streams_mu_;
  std::set<EncodeStreamReactor*> streams_;  // guarded by streams_mu_; open streams
  bool accepting_ = true;                   // guarded by streams_mu_
};

}  // namespace server
