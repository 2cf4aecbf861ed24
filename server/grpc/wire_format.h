// Requests and responses as raw gRPC byte buffers. Every RPC whose request
// has a string field reads raw bytes, so that one UTF-8 rule holds for all
// (utf8_fields.h): protobuf alone refuses invalid UTF-8 in some builds only,
// and without saying which field.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <google/protobuf/message.h>
#include "absl/status/status.h"

namespace server {

// Parses `buffer` into `message` and checks its string fields. On failure:
// INVALID_ARGUMENT, precise for invalid UTF-8 ("input 3: text is not valid
// UTF-8 (at byte 5)"); `message` then keeps the fields read before the fault
// (often the request id).
absl::Status ParseRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* message);

absl::Status SerializeResponse(const google::protobuf::Message& message, grpc::ByteBuffer* buffer);

}  // namespace server
