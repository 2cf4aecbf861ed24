// Proto <-> core conversions of Encode (and EncodeStream), Tokenize and
// Decode. Encode's quantized outputs are encode_call.h's.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/backend.h"

namespace server {

// The request in the core's types. INVALID_ARGUMENT for a pooling or
// truncation direction value the API does not define; everything else is the
// core's to check.
absl::StatusOr<core::EncodeRequest> ToCore(const encoder::v1::EncodeRequest& request);
// Window mode's per-input window counts into the response's outputs.
void SetWindows(const std::vector<int>& windows, encoder::v1::EncodeResponse* response);
void FillEncodeResponse(const std::string& id, engine::Pooling pooling,
                        const std::vector<core::InputOutput>& outputs,
                        encoder::v1::EncodeResponse* response);

absl::StatusOr<core::TokenizeRequest> ToCore(const encoder::v1::TokenizeRequest& request);
void ToProto(const engine::Encoding& encoding, encoder::v1::TokenizeResponse* response);

absl::StatusOr<core::DecodeRequest> ToCore(const encoder::v1::DecodeRequest& request);
void ToProto(std::string text, encoder::v1::DecodeResponse* response);

}  // namespace server
