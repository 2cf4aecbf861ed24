#include "server/core/json_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace server {

absl::StatusOr<std::optional<nlohmann::json>> ReadJsonObjectFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json object = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  return object;
}

}  // namespace server
