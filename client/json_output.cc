#include "client/json_output.h"

#include <charconv>
#include <cmath>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

namespace client {
namespace {

// The shortest text that reads back as the same float; JSON has no NaN.
void AppendFloat(float value, std::string* out) {
  if (!std::isfinite(value)) {
    *out += "null";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendFloatRow(const float* values, int count, std::string* out) {
  *out += '[';
  for (int i = 0; i < count; ++i) {
    if (i > 0) *out += ", ";
    AppendFloat(values[i], out);
  }
  *out += ']';
}

template <typename Ints>
void AppendInts(const Ints& values, std::string* out) {
  *out += '[';
  bool first = true;
  for (const auto value : values) {
    if (!first) *out += ", ";
    first = false;
    *out += std::to_string(value);
  }
  *out += ']';
}

void AppendString(const std::string& text, std::string* out) {
  *out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string EncodeOutputToJson(const encoder::v1::Output& output, bool token_states) {
  std::string json = token_states ? "{\"hidden_states\": [" : "{\"embedding\": ";
  const float* values = output.values().data();
  const int cols = output.cols();
  if (token_states) {
    for (int row = 0; row < output.rows(); ++row) {
      if (row > 0) json += ", ";
      AppendFloatRow(values + static_cast<size_t>(row) * cols, cols, &json);
    }
    json += ']';
  } else {
    AppendFloatRow(values, output.values_size(), &json);
  }
  json += ", \"tokens\": " + std::to_string(output.tokens()) + "}";
  return json;
}

std::string TokenizeResponseToJson(const encoder::v1::TokenizeResponse& response) {
  std::string json = "{\"ids\": ";
  AppendInts(response.ids(), &json);
  json += ", \"token_type_ids\": ";
  AppendInts(response.token_type_ids(), &json);
  json += ", \"tokens\": [";
  for (int i = 0; i < response.tokens_size(); ++i) {
    if (i > 0) json += ", ";
    AppendString(response.tokens(i), &json);
  }
  json += "], \"offsets\": [";
  for (int i = 0; i < response.offsets_size(); ++i) {
    if (i > 0) json += ", ";
    json += "[" + std::to_string(response.offsets(i).begin()) + ", " +
            std::to_string(response.offsets(i).end()) + "]";
  }
  json += "]}";
  return json;
}

std::string MessageToJsonLine(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) return "{}";
  return json;
}

}  // namespace client
