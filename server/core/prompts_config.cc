#include "server/core/prompts_config.h"

#include "absl/strings/str_cat.h"
#include "server/core/json_file.h"

namespace server {

absl::StatusOr<Prompts> ReadPrompts(const std::string& model_dir) {
  const std::string path = model_dir + "/config_sentence_transformers.json";
  absl::StatusOr<std::optional<nlohmann::json>> config = ReadJsonObjectFile(path);
  if (!config.ok()) return config.status();
  Prompts prompts;
  if (!config->has_value()) return prompts;
  const auto found = (*config)->find("prompts");
  if (found == (*config)->end() || found->is_null()) return prompts;
  if (!found->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": \"prompts\" is not an object"));
  }
  for (const auto& [name, text] : found->items()) {
    if (!text.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": prompt \"", name, "\" is not a string"));
    }
    prompts[name] = text.get<std::string>();
  }
  return prompts;
}

}  // namespace server
