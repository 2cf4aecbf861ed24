#include "server/core/model/quantization_ranges.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace server::core {
namespace {

absl::Status Bad(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "quantization ranges ", path, ": ", why,
      " (expected {\"ranges\": [[minimum, ...], [maximum, ...]]}, one value per dimension)"));
}

}  // namespace

absl::StatusOr<QuantizationRanges> ReadQuantizationRanges(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read quantization ranges ", path));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json parsed = nlohmann::json::parse(text.str(), nullptr, false);
  if (parsed.is_discarded()) return Bad(path, "not valid JSON");
  const nlohmann::json* rows = &parsed;
  if (parsed.is_object()) {
    const auto it = parsed.find("ranges");
    if (it == parsed.end()) return Bad(path, "no \"ranges\"");
    rows = &*it;
  }
  if (!rows->is_array() || rows->size() != 2 || !(*rows)[0].is_array() || !(*rows)[1].is_array()) {
    return Bad(path, "\"ranges\" is not two rows");
  }
  if ((*rows)[0].size() != (*rows)[1].size() || (*rows)[0].empty()) {
    return Bad(path, absl::StrCat("its rows have ", (*rows)[0].size(), " and ", (*rows)[1].size(),
                                  " values"));
  }
  QuantizationRanges ranges;
  for (int row = 0; row < 2; ++row) {
    std::vector<float>& out = row == 0 ? ranges.minimum : ranges.maximum;
    for (const nlohmann::json& value : (*rows)[row]) {
      if (!value.is_number()) return Bad(path, "a value is not a number");
      // float32, as sentence-transformers' ranges for float32 embeddings.
      const auto v = static_cast<float>(value.get<double>());
      if (!std::isfinite(v)) return Bad(path, "a value is not a finite float32");
      out.push_back(v);
    }
  }
  for (int i = 0; i < ranges.size(); ++i) {
    if (ranges.maximum[i] < ranges.minimum[i]) {
      return Bad(path, absl::StrCat("dimension ", i, "'s maximum is below its minimum"));
    }
  }
  return ranges;
}

absl::StatusOr<std::shared_ptr<const QuantizationRanges>> LoadQuantizationRanges(
    const std::string& file, const std::string& model_dir, int embedding_size) {
  std::string path = file;
  if (path.empty()) {
    const std::filesystem::path shipped =
        std::filesystem::path(model_dir) / kQuantizationRangesFile;
    std::error_code error;
    if (!std::filesystem::is_regular_file(shipped, error)) return nullptr;
    path = shipped.string();
  }
  absl::StatusOr<QuantizationRanges> ranges = ReadQuantizationRanges(path);
  if (!ranges.ok()) return ranges.status();
  if (ranges->size() != embedding_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantization ranges ", path, ": ", ranges->size(),
                     " dimensions, but the model's embedding has ", embedding_size));
  }
  return std::make_shared<const QuantizationRanges>(*std::move(ranges));
}

}  // namespace server::core
