// The calibration of int8 and uint8 embeddings: sentence-transformers'
// `ranges` (2 x dim: row 0 each dimension's minimum over calibration
// embeddings, row 1 its maximum), as JSON {"ranges": [[min, ...], [max, ...]]}
// (or the bare two rows). A model directory may ship it as
// quantization_ranges.json; the server also takes one from a flag.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"

namespace engine {

inline constexpr char kCalibrationRangesFile[] = "quantization_ranges.json";

struct CalibrationRanges {
  std::vector<float> minimum;  // ranges[0]
  std::vector<float> maximum;  // ranges[1]
  int size() const { return static_cast<int>(minimum.size()); }
};

// INVALID_ARGUMENT "quantization ranges SOURCE: ..." for anything but two
// rows of the same non-zero length of finite float32 numbers with each
// maximum at least its minimum.
absl::StatusOr<CalibrationRanges> ParseCalibrationRanges(const nlohmann::json& document,
                                                         const std::string& source);
// The same on the file's text (not valid JSON is INVALID_ARGUMENT too).
absl::StatusOr<CalibrationRanges> ParseCalibrationRanges(const std::string& text,
                                                         const std::string& source);

}  // namespace engine
