// Reader of torch.save files (the zip format of torch >= 1.6) holding a
// state_dict, such as BAAI/bge-m3's sparse_linear.pt and colbert_linear.pt.
// The pickle is never run: a small VM accepts a whitelist of opcodes and of
// globals (OrderedDict, torch's tensor/parameter rebuilders and storage
// types); anything else is an error naming the opcode or global it met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace engine {

// One tensor of a torch.save file, converted to float32 (row-major, contiguous).
struct TorchTensor {
  std::string dtype;  // the storage type as stored: "float32", "float16", "bfloat16", "float64"
  std::vector<int64_t> shape;
  std::vector<float> values;  // product(shape) floats
};

// The file's top-level object: an OrderedDict (or dict) of name -> tensor; a
// bare tensor is the entry "".
using TorchStateDict = std::map<std::string, TorchTensor>;

// Reads a file written by torch.save (the zip format of torch >= 1.6). Errors name `path`.
absl::StatusOr<TorchStateDict> ReadTorchFile(const std::string& path);

// The same on the bytes of a whole file; `source` names it in errors (the fuzz
// target's entry).
absl::StatusOr<TorchStateDict> ParseTorchFile(const uint8_t* bytes, size_t size,
                                              const std::string& source);

}  // namespace engine
