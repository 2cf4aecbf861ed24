// The one place where the server's errors become gRPC status codes. Every
// component reports an absl::Status whose code already says what the client
// should do (the codes are the same numbers in both libraries); this maps it
// to the wire, unary or in a stream's per-request error.
#pragma once

#include <array>
#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "encoder/v1/encoder.pb.h"

namespace server {

// The codes the server answers with, and nothing else:
// OK                  success
// INVALID_ARGUMENT    a bad input; the message names the input and the reason
// FAILED_PRECONDITION text input to a model whose tokenizer could not be
//                     loaded (it serves token ids; the message says why)
// RESOURCE_EXHAUSTED  the queue is full; retry with backoff
// UNAVAILABLE         the server is shutting down; retry on another replica
// DEADLINE_EXCEEDED   the deadline passed while the request was queued
// CANCELLED           the client cancelled
// INTERNAL            the engine failed on a valid request (a bug); any other
//                     code a component reports becomes INTERNAL, message kept
inline constexpr std::array<grpc::StatusCode, 8> kAnsweredCodes = {
    grpc::StatusCode::OK,
    grpc::StatusCode::INVALID_ARGUMENT,
    grpc::StatusCode::FAILED_PRECONDITION,
    grpc::StatusCode::RESOURCE_EXHAUSTED,
    grpc::StatusCode::UNAVAILABLE,
    grpc::StatusCode::DEADLINE_EXCEEDED,
    grpc::StatusCode::CANCELLED,
    grpc::StatusCode::INTERNAL};

grpc::StatusCode ToGrpcCode(absl::StatusCode code);

grpc::Status ToGrpcStatus(const absl::Status& status);

// For EncodeStream, where one request's failure must not end the stream.
encoder::v1::Error ToProtoError(const absl::Status& status);

// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT.
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace server
