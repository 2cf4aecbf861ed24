#include "server/core/model/model_name.h"

#include <filesystem>
#include <optional>

#include "engine/hub_cache.h"

namespace server::core {

std::string DefaultModelName(const std::string& model_path, const std::string& working_dir) {
  std::filesystem::path path(model_path);
  if (path.is_relative()) path = std::filesystem::path(working_dir) / path;
  // Lexically: "a/b/", "a/b/." and "a/c/../b" all end in b.
  path = path.lexically_normal();
  if (std::optional<std::string> repo = engine::RepoIdOfModelPath(path.string())) return *repo;
  if (!path.has_filename()) path = path.parent_path();
  const std::string name = path.filename().string();
  return name.empty() ? path.string() : name;
}

}  // namespace server::core
