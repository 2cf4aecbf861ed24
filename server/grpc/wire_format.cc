#include "server/grpc/wire_format.h"

#include <string>
#include <vector>

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/grpc/utf8_fields.h"

namespace server {
namespace {

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace

absl::Status ParseRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* message) {
  grpc::ByteBuffer copy(buffer);  // the reader consumes its buffer; copies share the slices
  grpc::ProtoBufferReader reader(&copy);
  if (message->ParseFromZeroCopyStream(&reader)) {
    // A parser that checks UTF-8 has checked every string field already.
    return ParserChecksUtf8() ? absl::OkStatus() : CheckUtf8Fields(*message);
  }
  RETURN_IF_ERROR(CheckUtf8Fields(Flatten(buffer), message->GetDescriptor()));
  return absl::InvalidArgumentError(
      absl::StrCat("the request is not a valid ", message->GetDescriptor()->full_name()));
}

absl::Status SerializeResponse(const google::protobuf::Message& message, grpc::ByteBuffer* buffer) {
  bool own_buffer = false;
  const grpc::Status status =
      grpc::SerializationTraits<google::protobuf::Message>::Serialize(message, buffer, &own_buffer);
  if (status.ok()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("cannot serialize the response: ", status.error_message()));
}

}  // namespace server
