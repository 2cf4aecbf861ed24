// Writes float32 tensors as a .safetensors file (make-model, tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace engine {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// The file's bytes: 8-byte little-endian header length, the JSON header
// padded with spaces to a multiple of 8, then the F32 data.
std::string SerializeSafetensors(const std::vector<NamedTensor>& tensors);

absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors);

// Writes `contents` to `path`, replacing it.
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace engine
