// Proto <-> core conversions of what several messages share: an input, the
// truncation and long-input options, and the enums a response reports.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"

namespace server {

encoder::v1::Precision ToProto(engine::Precision precision);
encoder::v1::Pooling ToProto(engine::Pooling pooling);

// One input (kUnset when none of its kinds is set).
core::Input ToCore(const encoder::v1::Input& input);
std::vector<core::Input> ToCore(
    const google::protobuf::RepeatedPtrField<encoder::v1::Input>& inputs);
// INVALID_ARGUMENT for a value the API does not define.
absl::StatusOr<engine::TruncationSide> ToCore(encoder::v1::TruncationDirection direction);

// The request's long_input (LongInput; unset for UNSPECIFIED); INVALID_ARGUMENT
// for an unknown value.
absl::Status LongInputFromProto(int value, std::optional<core::LongInput>* out);

}  // namespace server
