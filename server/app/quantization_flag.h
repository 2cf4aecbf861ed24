// --quantization-ranges: the calibration files of int8/uint8 embeddings
// (server/core/model/quantization_ranges.h), as --model names models: "FILE" for
// the one model, or "NAME=FILE" entries separated by commas (main.cc joins
// repeated flags so), NAME a served model's name.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/app/server_config.h"
#include "server/core/model/model_loader.h"

namespace server {

// Fills config->quantization_ranges ("" for a lone FILE). INVALID_ARGUMENT
// for an entry that is not NAME=FILE when there are several, or a name given
// twice.
absl::Status ParseQuantizationRangesFlag(const std::string& value, ServerConfig* config);

// Reads the ranges of `spec`'s freshly loaded `model` (its file from the
// flag, else quantization_ranges.json in its directory, else none) into
// model->quantization_ranges. Errors name the model and the file: an
// unreadable file, a bad shape, or a size other than the model's embedding.
absl::Status AttachQuantizationRanges(const ServerConfig& config, const ModelSpec& spec,
                                      core::LoadedModel* model);

// Every NAME of the flag is one of `models`' names, else INVALID_ARGUMENT
// listing them: before loading with several named models (nothing to check
// while `models` is empty); a lone model's name is known once loaded, and
// AttachQuantizationRanges checks it then, before the model is logged.
absl::Status CheckQuantizationRangesNames(const ServerConfig& config,
                                          const std::vector<ModelSpec>& models);

}  // namespace server
