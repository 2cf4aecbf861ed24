// Encode's core call, shared by the unary Encode and EncodeStream: the
// request's embedding type checked against the model before any engine work,
// then the dispatcher; the answer keeps what its response's quantization needs.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/clock.h"
#include "server/core/model/quantize.h"
#include "server/core/model_set.h"

namespace server {

// An Encode request's answer before it becomes its response.
struct EncodedOutputs {
  std::string id;  // the request's, echoed
  core::EncodeResult result;
  core::EmbeddingType type = core::EmbeddingType::kFloat;
  const core::ModelDescription* model = nullptr;  // the ranges of int8/uint8
};

using EncodeDone = std::function<void(absl::StatusOr<EncodedOutputs>)>;

// ToCore(request), EmbeddingTypeOf, then `model`'s dispatcher; `done` is
// called exactly once, as the dispatcher's.
void DispatchEncode(const core::ModelRoute& model, const encoder::v1::EncodeRequest& request,
                    core::Clock::time_point deadline, std::function<bool()> is_cancelled,
                    EncodeDone done);

// The response: outputs, window counts, then quantization (INVALID_ARGUMENT
// as QuantizeOutputs says).
absl::Status ToProto(EncodedOutputs outputs, encoder::v1::EncodeResponse* response);

}  // namespace server
