// The calibration file of int8 and uint8 embeddings (server/core/model/quantize.h):
// JSON {"ranges": [[min, ...], [max, ...]]}, sentence-transformers' `ranges`
// (2 x dim: row 0 each dimension's minimum over calibration embeddings, row 1
// its maximum), e.g. written from Python with
//   json.dump({"ranges": np.vstack((emb.min(0), emb.max(0))).tolist()}, f)
// Given at start (--quantization-ranges) or shipped in the model directory
// as quantization_ranges.json.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/core/model/quantize.h"

namespace server::core {

inline constexpr char kQuantizationRangesFile[] = "quantization_ranges.json";
static_assert(std::string_view(kQuantizationRangesFile) == engine::kCalibrationRangesFile);

// The ranges in `path`. INVALID_ARGUMENT naming the file for anything but two
// rows of the same non-zero length of finite numbers with each maximum at
// least its minimum; NOT_FOUND when it cannot be read.
absl::StatusOr<QuantizationRanges> ReadQuantizationRanges(const std::string& path);

// A model's ranges: `file` when not empty, else `shipped` (the model
// directory's quantization_ranges.json as the engine's loader read it, at
// `shipped_source`; null: none, and then no int8/uint8). Their length must be
// the model's `embedding_size`, else INVALID_ARGUMENT naming the file and
// both sizes.
absl::StatusOr<std::shared_ptr<const QuantizationRanges>> ChooseQuantizationRanges(
    const std::string& file, std::shared_ptr<const QuantizationRanges> shipped,
    const std::string& shipped_source, int embedding_size);

// The same, reading `model_dir`'s quantization_ranges.json itself (for a
// directory that is not loaded as a model).
absl::StatusOr<std::shared_ptr<const QuantizationRanges>> LoadQuantizationRanges(
    const std::string& file, const std::string& model_dir, int embedding_size);

}  // namespace server::core
