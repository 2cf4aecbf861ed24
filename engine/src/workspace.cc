#include "workspace.h"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dnnl/dense.h"

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

absl::StatusOr<Workspace> Workspace::Create(const ModelConfig& config, int64_t max_batch_tokens,
                                            int threads, bool int8) {
  Workspace ws;
  ws.rows = BucketRows(max_batch_tokens);
  ws.max_sequence = std::min<int64_t>(config.max_position_embeddings, max_batch_tokens);
  ws.threads = std::max(threads, 1);
  const size_t rows = static_cast<size_t>(ws.rows);
  const size_t h = static_cast<size_t>(config.hidden_size);
  const size_t inter = static_cast<size_t>(config.intermediate_size);
  const size_t scores =
      static_cast<size_t>(ws.threads) * static_cast<size_t>(ws.max_sequence * ws.max_sequence);
  for (auto [buffer, floats] : {std::pair<Buffer*, size_t>{&ws.hidden, rows * h},
                                {&ws.normed, rows * h},
                                {&ws.qkv, rows * 3 * h},
                                {&ws.context, rows * h},
                                {&ws.sublayer, rows * h},
                                {&ws.intermediate, rows * inter},
                                {&ws.scores, scores}}) {
    absl::StatusOr<Buffer> allocated = Buffer::Allocate(floats);
    if (!allocated.ok()) return allocated.status();
    *buffer = *std::move(allocated);
  }
  if (int8) {
    // Buffer counts 4-byte floats: u8 rows take a quarter as many.
    const size_t quantized = (rows * std::max(h, inter) + 3) / 4;
    for (auto [buffer, floats] : {std::pair<Buffer*, size_t>{&ws.quantized, quantized},
                                  {&ws.row_scale, rows},
                                  {&ws.row_zero, rows},
                                  {&ws.accumulator, rows * std::max(3 * h, inter)}}) {
      absl::StatusOr<Buffer> allocated = Buffer::Allocate(floats);
      if (!allocated.ok()) return allocated.status();
      *buffer = *std::move(allocated);
    }
  }
  return ws;
}

}  // namespace engine
