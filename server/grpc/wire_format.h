// Requests and responses as raw gRPC byte buffers. The text-carrying methods
// take raw bytes because protobuf refuses a proto3 string field holding
// invalid UTF-8 without saying which field; reading the bytes ourselves lets
// the client learn which input and which byte are at fault.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <google/protobuf/message.h>
#include "absl/status/status.h"

namespace server {

// Parses `buffer` into `message`. On failure: INVALID_ARGUMENT, precise for
// invalid UTF-8 ("input 3: text is not valid UTF-8 (at byte 5)"); `message`
// then keeps the fields read before the fault (often the request id).
absl::Status ParseRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* message);

absl::Status SerializeResponse(const google::protobuf::Message& message, grpc::ByteBuffer* buffer);

}  // namespace server
