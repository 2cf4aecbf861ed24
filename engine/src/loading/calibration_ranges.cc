#include "engine/calibration_ranges.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

absl::Status Bad(const std::string& source, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "quantization ranges ", source, ": ", why,
      " (expected {\"ranges\": [[minimum, ...], [maximum, ...]]}, one value per dimension)"));
}

}  // namespace

absl::StatusOr<CalibrationRanges> ParseCalibrationRanges(const nlohmann::json& document,
                                                         const std::string& source) {
  const nlohmann::json* rows = &document;
  if (document.is_object()) {
    const auto it = document.find("ranges");
    if (it == document.end()) return Bad(source, "no \"ranges\"");
    rows = &*it;
  }
  if (!rows->is_array() || rows->size() != 2 || !(*rows)[0].is_array() || !(*rows)[1].is_array()) {
    return Bad(source, "\"ranges\" is not two rows");
  }
  if ((*rows)[0].size() != (*rows)[1].size() || (*rows)[0].empty()) {
    return Bad(source, absl::StrCat("its rows have ", (*rows)[0].size(), " and ", (*rows)[1].size(),
                                    " values"));
  }
  CalibrationRanges ranges;
  for (int row = 0; row < 2; ++row) {
    std::vector<float>& out = row == 0 ? ranges.minimum : ranges.maximum;
    for (const nlohmann::json& value : (*rows)[row]) {
      if (!value.is_number()) return Bad(source, "a value is not a number");
      // float32, as sentence-transformers' ranges for float32 embeddings.
      const auto v = static_cast<float>(value.get<double>());
      if (!std::isfinite(v)) return Bad(source, "a value is not a finite float32");
      out.push_back(v);
    }
  }
  for (int i = 0; i < ranges.size(); ++i) {
    if (ranges.maximum[i] < ranges.minimum[i]) {
      return Bad(source, absl::StrCat("dimension ", i, "'s maximum is below its minimum"));
    }
  }
  return ranges;
}

absl::StatusOr<CalibrationRanges> ParseCalibrationRanges(const std::string& text,
                                                         const std::string& source) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return Bad(source, "not valid JSON");
  return ParseCalibrationRanges(parsed, source);
}

}  // namespace engine
