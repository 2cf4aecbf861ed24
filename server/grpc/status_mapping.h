// The one place where the server's errors become gRPC status codes. Every
// component reports an absl::Status whose code already says what the client
// should do (the codes are the same numbers in both libraries); this maps it
// to the wire, unary or in a stream's per-request error.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/api/answered_codes.h"

namespace server {

// The codes answered are server/core/api/answered_codes.h's.
grpc::StatusCode ToGrpcCode(absl::StatusCode code);

// The same number as absl's code (for the metrics, which know no gRPC).
inline absl::StatusCode ToAbslCode(grpc::StatusCode code) {
  return static_cast<absl::StatusCode>(static_cast<int>(code));
}

grpc::Status ToGrpcStatus(const absl::Status& status);

// For EncodeStream, where one request's failure must not end the stream.
encoder::v1::Error ToProtoError(const absl::Status& status);

// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT.
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace server
