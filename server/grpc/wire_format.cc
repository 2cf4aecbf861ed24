#include "server/grpc/wire_format.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include "absl/strings/str_cat.h"
#include "server/core/api/utf8.h"

namespace server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

struct PathStep {
  const FieldDescriptor* field;
  int index;  // among the repeated field's elements
};

// Walks the wire bytes schema-first (protobuf will not parse them) looking
// for the first string field that is not UTF-8. Fills `path` and `offset`.
bool FindInvalidUtf8(const std::string& bytes, const Descriptor* descriptor,
                     std::vector<PathStep>* path, size_t* offset) {
  UnknownFieldSet fields;
  if (!fields.ParseFromString(bytes)) return false;
  std::map<int, int> seen;
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& field = fields.field(i);
    const int index = seen[field.number()]++;
    if (field.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    const FieldDescriptor* descriptor_field = descriptor->FindFieldByNumber(field.number());
    if (descriptor_field == nullptr) continue;
    path->push_back({descriptor_field, index});
    if (descriptor_field->type() == FieldDescriptor::TYPE_STRING &&
        !IsValidUtf8(field.length_delimited(), offset)) {
      return true;
    }
    if (descriptor_field->type() == FieldDescriptor::TYPE_MESSAGE &&
        FindInvalidUtf8(field.length_delimited(), descriptor_field->message_type(), path, offset)) {
      return true;
    }
    path->pop_back();
  }
  return false;
}

// "input 3: text_pair is not valid UTF-8 (at byte 5)": each repeated field on
// the way names an element ("inputs" -> "input 3"), the last field the text.
std::string DescribeInvalidUtf8(const std::vector<PathStep>& path, size_t offset) {
  std::string message;
  for (const PathStep& step : path) {
    if (!step.field->is_repeated()) continue;
    std::string element = step.field->name();
    if (element.size() > 1 && element.back() == 's') element.pop_back();
    absl::StrAppend(&message, element, " ", step.index, ": ");
  }
  absl::StrAppend(&message, path.back().field->name(), " is not valid UTF-8 (at byte ", offset,
                  ")");
  return message;
}

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
  if (message->ParseFromZeroCopyStream(&reader)) return absl::OkStatus();
  std::vector<PathStep> path;
  size_t offset = 0;
  if (FindInvalidUtf8(Flatten(buffer), message->GetDescriptor(), &path, &offset)) {
    return absl::InvalidArgumentError(DescribeInvalidUtf8(path, offset));
  }
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
