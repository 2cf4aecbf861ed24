// A buffer of anonymous mmap'd memory: zeroed, only committed when first
// touched, and returned to the system (not kept in the heap) when freed.
// Used for the workspace's activations and for weights while they load.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"

namespace engine {

class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  static absl::StatusOr<Buffer> Allocate(size_t floats);
  float* data() const { return data_; }
  size_t size() const { return floats_; }

 private:
  float* data_ = nullptr;
  size_t floats_ = 0;
};

}  // namespace engine
