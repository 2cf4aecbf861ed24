#include "runtime/buffer.h"

#include <sys/mman.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace engine {

Buffer::~Buffer() {
  if (data_ != nullptr) munmap(data_, floats_ * sizeof(float));
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), floats_(std::exchange(other.floats_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, floats_ * sizeof(float));
    data_ = std::exchange(other.data_, nullptr);
    floats_ = std::exchange(other.floats_, 0);
  }
  return *this;
}

absl::StatusOr<Buffer> Buffer::Allocate(size_t floats) {
  Buffer buffer;
  if (floats == 0) return buffer;
  void* p = mmap(nullptr, floats * sizeof(float), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot reserve ", floats * sizeof(float), " bytes of workspace"));
  }
  buffer.data_ = static_cast<float*>(p);
  buffer.floats_ = floats;
  return buffer;
}

}  // namespace engine
