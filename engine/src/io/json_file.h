// Reads the small JSON configuration files a model directory may hold.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace engine {

// The file's JSON object; nullopt when there is no such file. Errors name
// the file: it cannot be read (with the OS's reason), is not JSON (with the
// line and column) or is not a JSON object.
absl::StatusOr<std::optional<nlohmann::json>> ReadJsonObjectFile(const std::string& path);
// The same for a file of any JSON value (modules.json is an array).
absl::StatusOr<std::optional<nlohmann::json>> ReadJsonFile(const std::string& path);

}  // namespace engine
