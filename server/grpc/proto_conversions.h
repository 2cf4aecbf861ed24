// Copies between the engine's and batcher's types and the API's messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/backend.h"
#include "server/core/model_set.h"

namespace server {

encoder::v1::Precision ToProto(engine::Precision precision);
encoder::v1::Pooling ToProto(engine::Pooling pooling);

// The request in the core's types. INVALID_ARGUMENT for a pooling or
// truncation direction value the API does not define; everything else is the
// core's to check.
absl::StatusOr<core::EncodeRequest> ToCore(const encoder::v1::EncodeRequest& request);
absl::StatusOr<core::TokenizeRequest> ToCore(const encoder::v1::TokenizeRequest& request);
// One input (kUnset when none of its kinds is set).
core::Input ToCore(const encoder::v1::Input& input);
absl::StatusOr<engine::TruncationSide> ToCore(encoder::v1::TruncationDirection direction);
// INVALID_ARGUMENT for an output kind the API does not define or one asked twice.
absl::StatusOr<core::MultiRequest> ToCore(const encoder::v1::EncodeMultiRequest& request);
void ToProto(core::MultiResult result, encoder::v1::EncodeMultiResponse* response);

// The request's long_input (LongInput; unset for UNSPECIFIED); INVALID_ARGUMENT
// for an unknown value.
absl::Status LongInputFromProto(int value, std::optional<core::LongInput>* out);
// Window mode's per-input window counts into the response's outputs.
void SetWindows(const std::vector<int>& windows, encoder::v1::EncodeResponse* response);
void FillEncodeResponse(const std::string& id, engine::Pooling pooling,
                        const std::vector<InputOutput>& outputs,
                        encoder::v1::EncodeResponse* response);

void FillTokenizeResponse(const engine::Encoding& encoding,
                          encoder::v1::TokenizeResponse* response);

// GetModelInfo's and ListModels' rendering of the core's description.
encoder::v1::ModelInfo MakeModelInfo(const ModelDescription& model);

}  // namespace server
