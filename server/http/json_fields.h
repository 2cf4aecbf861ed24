// The field-level pieces every JSON request parser of the HTTP adapter
// shares (json_mapping.cc for the embedding routes, json_heads.cc for the
// head routes): errors that name the field, optional and required fields,
// the "model" field, and the dump every answer uses.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"

namespace server::http {

// A field whose value is wrong / of the wrong type / missing (http_errors.h's FieldError).
absl::Status BadValue(absl::string_view field, absl::string_view message);
absl::Status BadType(absl::string_view field, absl::string_view message);
absl::Status Missing(absl::string_view field);

// An optional boolean field: `default_value` when absent or null.
absl::StatusOr<bool> Flag(const nlohmann::json& body, const char* field, bool default_value);
// "encoding_format": "float" (or absent / null: false) | "base64" (true),
// as OpenAI's embeddings request spells it.
absl::StatusOr<bool> Base64Encoding(const nlohmann::json& body);
// A string field that must be there.
// "truncate" (left unset when absent: the server's --auto-truncate decides)
// and "truncation_direction" as TEI spells them: "Right" | "Left", serde's
// aliases "right" | "left".
absl::Status Truncation(const nlohmann::json& body, std::optional<bool>* truncate,
                        engine::TruncationSide* side);

// The extension field "long_input": "truncate" | "window" | "error" (null or
// absent: unset; server/core/requests/long_inputs.h); it wins over "truncate".
absl::Status LongInputField(const nlohmann::json& body, std::optional<core::LongInput>* out);

absl::StatusOr<std::string> RequiredString(const nlohmann::json& body, const char* field);
// The optional string field "model" into `model` (may be null); absent or
// null leaves it alone.
absl::Status ModelField(const nlohmann::json& body, std::string* model);

// Compact JSON; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string Dump(const nlohmann::json& value);

}  // namespace server::http
