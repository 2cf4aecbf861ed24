#include "server/http/json_fields.h"

#include "absl/strings/str_cat.h"
#include "server/http/http_errors.h"

namespace server::http {

absl::Status BadValue(absl::string_view field, absl::string_view message) {
  return FieldError(field, kInvalidValue, message);
}
absl::Status BadType(absl::string_view field, absl::string_view message) {
  return FieldError(field, kInvalidType, message);
}
absl::Status Missing(absl::string_view field) {
  return FieldError(field, kMissingParameter, absl::StrCat("\"", field, "\" is missing"));
}

absl::StatusOr<bool> Flag(const nlohmann::json& body, const char* field, bool default_value) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return default_value;
  if (!it->is_boolean()) {
    return BadType(field, absl::StrCat("\"", field, "\" must be true or false"));
  }
  return it->get<bool>();
}

absl::Status Truncation(const nlohmann::json& body, std::optional<bool>* truncate,
                        engine::TruncationSide* side) {
  if (const auto it = body.find("truncate"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return BadType("truncate", "\"truncate\" must be true or false");
    *truncate = it->get<bool>();
  }
  const auto direction = body.find("truncation_direction");
  if (direction == body.end() || direction->is_null()) return absl::OkStatus();
  if (*direction == "Left" || *direction == "left") {
    *side = engine::TruncationSide::kLeft;
  } else if (*direction != "Right" && *direction != "right") {
    return BadValue("truncation_direction",
                    "\"truncation_direction\" must be \"Right\" or \"Left\"");
  }
  return absl::OkStatus();
}

absl::Status LongInputField(const nlohmann::json& body, std::optional<core::LongInput>* out) {
  const auto it = body.find("long_input");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (*it == "truncate") {
    *out = core::LongInput::kTruncate;
  } else if (*it == "window") {
    *out = core::LongInput::kWindow;
  } else if (*it == "error") {
    *out = core::LongInput::kError;
  } else {
    return BadValue("long_input", "\"long_input\" must be \"truncate\", \"window\" or \"error\"");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Base64Encoding(const nlohmann::json& body) {
  const auto format = body.find("encoding_format");
  if (format == body.end() || format->is_null() || *format == "float") return false;
  if (*format == "base64") return true;
  return BadValue("encoding_format", "\"encoding_format\" must be \"float\" or \"base64\"");
}

absl::StatusOr<std::string> RequiredString(const nlohmann::json& body, const char* field) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return Missing(field);
  if (!it->is_string()) return BadType(field, absl::StrCat("\"", field, "\" must be a string"));
  return it->get<std::string>();
}

absl::Status ModelField(const nlohmann::json& body, std::string* model) {
  const auto it = body.find("model");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return BadType("model", "\"model\" must be a string");
  if (model != nullptr) *model = it->get<std::string>();
  return absl::OkStatus();
}

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace server::http
