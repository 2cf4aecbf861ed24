#include "server/core/pooling_config.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/json_file.h"

namespace server {

absl::StatusOr<engine::Pooling> ReadDefaultPooling(const std::string& model_dir) {
  const std::string path = model_dir + "/1_Pooling/config.json";
  absl::StatusOr<std::optional<nlohmann::json>> config = ReadJsonObjectFile(path);
  if (!config.ok()) return config.status();
  if (!config->has_value()) return engine::Pooling::kCls;
  std::vector<std::string> modes;
  for (const auto& [key, value] : (*config)->items()) {
    if (key.rfind("pooling_mode_", 0) == 0 && value.is_boolean() && value.get<bool>()) {
      modes.push_back(key);
    }
  }
  if (modes.size() == 1 && modes[0] == "pooling_mode_cls_token") return engine::Pooling::kCls;
  if (modes.size() == 1 && modes[0] == "pooling_mode_mean_tokens") return engine::Pooling::kMean;
  if (modes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no pooling_mode_* is true"));
  }
  return absl::UnimplementedError(
      absl::StrCat(path, ": asks for ", absl::StrJoin(modes, " + "),
                   "; the server supports pooling_mode_cls_token or pooling_mode_mean_tokens"));
}

}  // namespace server
