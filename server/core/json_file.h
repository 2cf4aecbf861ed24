// Reads the small JSON configuration files a model directory may hold.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace server {

// The file's JSON object; nullopt when the file does not exist; an error
// naming the file when it is not a JSON object.
absl::StatusOr<std::optional<nlohmann::json>> ReadJsonObjectFile(const std::string& path);

}  // namespace server
