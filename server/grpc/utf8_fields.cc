#include "server/grpc/utf8_fields.h"

#include <map>
#include <vector>

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include "absl/strings/str_cat.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/api/utf8.h"

namespace server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

struct PathStep {
  const FieldDescriptor* field;
  int index;  // among the repeated field's elements
};

// "input 3: text_pair is not valid UTF-8 (at byte 5)": each repeated message
// on the way names an element ("inputs" -> "input 3"); the text is the last
// field, an element of it when it is repeated ("texts" -> "text 1").
absl::Status InvalidUtf8(const std::vector<PathStep>& path, size_t offset) {
  const auto element = [](const PathStep& step) {
    std::string name = step.field->name();
    if (name.size() > 1 && name.back() == 's') name.pop_back();
    return absl::StrCat(name, " ", step.index);
  };
  std::string message;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (path[i].field->is_repeated()) absl::StrAppend(&message, element(path[i]), ": ");
  }
  const PathStep& text = path.back();
  absl::StrAppend(&message, text.field->is_repeated() ? element(text) : text.field->name(),
                  " is not valid UTF-8 (at byte ", offset, ")");
  return absl::InvalidArgumentError(message);
}

// Element `i` of `field` (0 for a singular field).
const std::string& StringAt(const Message& message, const FieldDescriptor* field, int i,
                            std::string* scratch) {
  const Reflection* reflection = message.GetReflection();
  return field->is_repeated() ? reflection->GetRepeatedStringReference(message, field, i, scratch)
                              : reflection->GetStringReference(message, field, scratch);
}
const Message& MessageAt(const Message& message, const FieldDescriptor* field, int i) {
  const Reflection* reflection = message.GetReflection();
  return field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                              : reflection->GetMessage(message, field);
}

// Fills `path` and `offset` with the first string field that is not UTF-8.
bool FindInParsed(const Message& message, std::vector<PathStep>* path, size_t* offset) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // the set ones, by number
  for (const FieldDescriptor* field : fields) {
    const bool text = field->type() == FieldDescriptor::TYPE_STRING;
    if (!text && field->type() != FieldDescriptor::TYPE_MESSAGE) continue;
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      path->push_back({field, i});
      std::string scratch;
      if (text ? !core::IsValidUtf8(StringAt(message, field, i, &scratch), offset)
               : FindInParsed(MessageAt(message, field, i), path, offset)) {
        return true;
      }
      path->pop_back();
    }
  }
  return false;
}

// The same, schema-first over wire bytes that protobuf will not parse.
bool FindInWire(const std::string& bytes, const Descriptor* descriptor, std::vector<PathStep>* path,
                size_t* offset) {
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
        !core::IsValidUtf8(field.length_delimited(), offset)) {
      return true;
    }
    if (descriptor_field->type() == FieldDescriptor::TYPE_MESSAGE &&
        FindInWire(field.length_delimited(), descriptor_field->message_type(), path, offset)) {
      return true;
    }
    path->pop_back();
  }
  return false;
}

}  // namespace

absl::Status CheckUtf8Fields(const Message& message) {
  std::vector<PathStep> path;
  size_t offset = 0;
  if (FindInParsed(message, &path, &offset)) return InvalidUtf8(path, offset);
  return absl::OkStatus();
}

absl::Status CheckUtf8Fields(const std::string& bytes, const Descriptor* descriptor) {
  std::vector<PathStep> path;
  size_t offset = 0;
  if (FindInWire(bytes, descriptor, &path, &offset)) return InvalidUtf8(path, offset);
  return absl::OkStatus();
}

bool ParserChecksUtf8() {
  static const bool checks = [] {
    const google::protobuf::LogSilencer quiet;  // the parser's complaint is the expected answer
    encoder::v1::DecodeResponse message;        // field 1: string text
    return !message.ParseFromString(std::string("\x0a\x01\xff", 3));
  }();
  return checks;
}

}  // namespace server
