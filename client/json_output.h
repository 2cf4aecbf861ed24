// The JSON lines encode and tokenize print: one object per input.
#pragma once

#include <string>

#include "encoder/v1/encoder.pb.h"

namespace client {

// {"embedding": [...], "tokens": N} for a pooled output,
// {"hidden_states": [[...], ...], "tokens": N} for token states (POOLING_NONE).
std::string EncodeOutputToJson(const encoder::v1::Output& output, bool token_states);

// {"ids": [...], "token_type_ids": [...], "tokens": [...], "offsets": [[begin, end], ...]}
std::string TokenizeResponseToJson(const encoder::v1::TokenizeResponse& response);

// The message as one JSON object with the proto's field names (enum values by name).
std::string MessageToJsonLine(const google::protobuf::Message& message);

}  // namespace client
