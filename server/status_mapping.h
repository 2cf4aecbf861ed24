// The one place where the server's errors become gRPC status codes. Every
// component reports an absl::Status whose code already says what the client
// should do (the codes are the same numbers in both libraries); this maps it
// to the wire, unary or in a stream's per-request error.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "encoder/v1/encoder.pb.h"

namespace server {

// INVALID_ARGUMENT    a bad input; the message names the input and the reason
// RESOURCE_EXHAUSTED  the queue is full; retry with backoff
// UNAVAILABLE         the server is shutting down; retry on another replica
// DEADLINE_EXCEEDED   the deadline passed while the request was queued
// CANCELLED           the client cancelled
// INTERNAL            the engine failed on a valid request (a bug)
grpc::Status ToGrpcStatus(const absl::Status& status);

// For EncodeStream, where one request's failure must not end the stream.
encoder::v1::Error ToProtoError(const absl::Status& status);

}  // namespace server
