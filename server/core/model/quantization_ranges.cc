#include "server/core/model/quantization_ranges.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace server::core {

absl::StatusOr<QuantizationRanges> ReadQuantizationRanges(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read quantization ranges ", path));
  std::stringstream text;
  text << in.rdbuf();
  return engine::ParseCalibrationRanges(text.str(), path);
}

absl::StatusOr<std::shared_ptr<const QuantizationRanges>> ChooseQuantizationRanges(
    const std::string& file, std::shared_ptr<const QuantizationRanges> shipped,
    const std::string& shipped_source, int embedding_size) {
  std::string path = shipped_source;
  if (!file.empty()) {
    absl::StatusOr<QuantizationRanges> ranges = ReadQuantizationRanges(file);
    if (!ranges.ok()) return ranges.status();
    shipped = std::make_shared<const QuantizationRanges>(*std::move(ranges));
    path = file;
  }
  if (shipped == nullptr) return nullptr;
  if (shipped->size() != embedding_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantization ranges ", path, ": ", shipped->size(),
                     " dimensions, but the model's embedding has ", embedding_size));
  }
  return shipped;
}

absl::StatusOr<std::shared_ptr<const QuantizationRanges>> LoadQuantizationRanges(
    const std::string& file, const std::string& model_dir, int embedding_size) {
  std::shared_ptr<const QuantizationRanges> shipped;
  const std::string path = (std::filesystem::path(model_dir) / kQuantizationRangesFile).string();
  std::error_code error;
  if (file.empty() && std::filesystem::is_regular_file(path, error)) {
    absl::StatusOr<QuantizationRanges> ranges = ReadQuantizationRanges(path);
    if (!ranges.ok()) return ranges.status();
    shipped = std::make_shared<const QuantizationRanges>(*std::move(ranges));
  }
  return ChooseQuantizationRanges(file, std::move(shipped), path, embedding_size);
}

}  // namespace server::core
