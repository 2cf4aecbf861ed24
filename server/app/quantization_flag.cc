#include "server/app/quantization_flag.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "server/core/model/quantization_ranges.h"

namespace server {

absl::Status ParseQuantizationRangesFlag(const std::string& value, ServerConfig* config) {
  config->quantization_ranges.clear();
  const std::vector<std::string> entries = absl::StrSplit(value, ',', absl::SkipEmpty());
  if (entries.size() == 1 && !absl::StrContains(entries[0], '=')) {
    config->quantization_ranges[""] = entries[0];
    return absl::OkStatus();
  }
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == entry.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--quantization-ranges \"", entry,
                       "\": with several entries each is NAME=FILE (a served model's name, '=', "
                       "a JSON file)"));
    }
    const std::string name = entry.substr(0, equals);
    if (!config->quantization_ranges.emplace(name, entry.substr(equals + 1)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--quantization-ranges names the model \"", name, "\" twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status AttachQuantizationRanges(const ServerConfig& config, const ModelSpec& spec,
                                      core::LoadedModel* model) {
  if (ServedModelSpecs(config).size() == 1) {
    RETURN_IF_ERROR(CheckQuantizationRangesNames(config, {{model->name, spec.dir}}));
  }
  std::string file;
  if (const auto named = config.quantization_ranges.find(model->name);
      named != config.quantization_ranges.end()) {
    file = named->second;
  } else if (const auto lone = config.quantization_ranges.find("");
             lone != config.quantization_ranges.end()) {
    if (ServedModelSpecs(config).size() > 1) {
      return absl::InvalidArgumentError(
          "--quantization-ranges: with several models each entry is NAME=FILE");
    }
    file = lone->second;
  }
  // The directory's own file was read with the model (LoadModel).
  absl::StatusOr<std::shared_ptr<const core::QuantizationRanges>> ranges =
      core::ChooseQuantizationRanges(file, model->shipped_quantization_ranges,
                                     model->shipped_quantization_ranges_source,
                                     model->embedding_size());
  if (!ranges.ok()) {
    return absl::Status(ranges.status().code(),
                        absl::StrCat("model ", model->name, ": ", ranges.status().message()));
  }
  model->quantization_ranges = *std::move(ranges);
  return absl::OkStatus();
}

absl::Status CheckQuantizationRangesNames(const ServerConfig& config,
                                          const std::vector<ModelSpec>& models) {
  if (models.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (const ModelSpec& model : models) names.push_back(model.name);
  for (const auto& [name, file] : config.quantization_ranges) {
    if (name.empty()) continue;
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--quantization-ranges ", name, "=", file, ": no served model is named \"",
                       name, "\" (served: \"", absl::StrJoin(names, "\", \""), "\")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace server
