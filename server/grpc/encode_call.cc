#include "server/grpc/encode_call.h"

#include <utility>

#include "server/grpc/encode_conversions.h"
#include "server/grpc/quantized_outputs.h"

namespace server {

void DispatchEncode(const core::ModelRoute& model, const encoder::v1::EncodeRequest& request,
                    core::Clock::time_point deadline, std::function<bool()> is_cancelled,
                    EncodeDone done) {
  absl::StatusOr<core::EncodeRequest> core_request = ToCore(request);
  if (!core_request.ok()) return done(core_request.status());
  absl::StatusOr<core::EmbeddingType> type = EmbeddingTypeOf(request, model.description);
  if (!type.ok()) return done(type.status());
  model.dispatcher->Dispatch(
      *core_request, deadline, std::move(is_cancelled),
      [done = std::move(done), id = request.id(), type = *type,
       description = &model.description](absl::StatusOr<core::EncodeResult> result) {
        if (!result.ok()) return done(result.status());
        done(EncodedOutputs{id, *std::move(result), type, description});
      });
}

absl::Status ToProto(EncodedOutputs outputs, encoder::v1::EncodeResponse* response) {
  FillEncodeResponse(outputs.id, outputs.result.pooling, outputs.result.outputs, response);
  SetWindows(outputs.result.windows, response);
  return QuantizeOutputs(outputs.type, *outputs.model, response);
}

}  // namespace server
