// The model's default pooling, as sentence-transformers records it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/encoder.h"

namespace server {

// Reads `model_dir`/1_Pooling/config.json when present: pooling_mode_cls_token
// gives kCls, pooling_mode_mean_tokens gives kMean; any other mode (max,
// weighted mean, last token, or several at once) is an error rather than a
// silently different embedding. Without the file: kCls, as for a plain BERT.
absl::StatusOr<engine::Pooling> ReadDefaultPooling(const std::string& model_dir);

}  // namespace server
