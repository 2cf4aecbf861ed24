#include "io/json_file.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "engine/model_files.h"

namespace engine {

absl::StatusOr<std::optional<nlohmann::json>> ReadJsonFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadModelFile(path);
  // Only a file that is not there at all is optional: one that cannot be
  // read (no permission, a directory, a symlink to a missing cache blob)
  // must not silently change what the model does.
  struct stat link;
  if (absl::IsNotFound(text.status()) && lstat(path.c_str(), &link) != 0) return std::nullopt;
  if (!text.ok()) return text.status();
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", DescribeJsonSyntaxError(*text, error.byte, error.what())));
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", error.what()));
  }
  return object;
}

absl::StatusOr<std::optional<nlohmann::json>> ReadJsonObjectFile(const std::string& path) {
  absl::StatusOr<std::optional<nlohmann::json>> object = ReadJsonFile(path);
  if (object.ok() && object->has_value() && !(*object)->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  return object;
}

}  // namespace engine
