// Where encode's and tokenize's inputs come from: positional texts (two by
// two with --pair), JSON lines from --input, and --ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "encoder/v1/encoder.pb.h"

namespace client {

// "101, 2023,102" -> {101, 2023, 102}.
absl::StatusOr<std::vector<int32_t>> ParseIds(const std::string& text);

// One JSON line: {"text": "..."}, {"text": "...", "text_pair": "..."} or
// {"ids": [...], "token_type_ids": [...]} (token_type_ids optional).
absl::StatusOr<encoder::v1::Input> ParseJsonInput(const std::string& line);

// All inputs, in this order: positional texts, the file's lines, --ids.
// Errors name the flag, or the file and line; a file (or standard input)
// without a JSON line is an error.
absl::StatusOr<std::vector<encoder::v1::Input>> CollectInputs(const InputOptions& options);

// cls, mean, none, pooler (any case), a number (sent as is), or empty for
// the model's default.
absl::StatusOr<encoder::v1::Pooling> ParsePooling(const std::string& name);

}  // namespace client
