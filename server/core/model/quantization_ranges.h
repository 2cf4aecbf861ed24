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

#include "absl/status/statusor.h"
#include "server/core/model/quantize.h"

namespace server::core {

inline constexpr char kQuantizationRangesFile[] = "quantization_ranges.json";

// The ranges in `path`. INVALID_ARGUMENT naming the file for anything but two
// rows of the same non-zero length of finite numbers with each maximum at
// least its minimum; NOT_FOUND when it cannot be read.
absl::StatusOr<QuantizationRanges> ReadQuantizationRanges(const std::string& path);

// A model's ranges: `file` when not empty, else the model directory's
// quantization_ranges.json when there is one, else null (no int8/uint8).
// Their length must be the model's `embedding_size`, else INVALID_ARGUMENT
// naming the file and both sizes.
absl::StatusOr<std::shared_ptr<const QuantizationRanges>> LoadQuantizationRanges(
    const std::string& file, const std::string& model_dir, int embedding_size);

}  // namespace server::core
