#include "runtime/profile.h"

namespace engine::profile {
namespace {

constexpr int kOps = static_cast<int>(Op::kCount);
std::atomic<bool> enabled{false};
std::array<std::atomic<int64_t>, kOps> nanoseconds{};
std::array<std::atomic<int64_t>, kOps> calls{};

}  // namespace

const char* OpName(Op op) {
  switch (op) {
    case Op::kEmbed:
      return "embeddings";
    case Op::kMatmul:
      return "matmul";
    case Op::kAttention:
      return "attention";
    case Op::kAddNorm:
      return "add+norm";
    case Op::kGelu:
      return "gelu";
    case Op::kQuantize:
      return "quantize";
    case Op::kDequantize:
      return "dequantize";
    case Op::kGate:
      return "gate";
    case Op::kCount:
      break;
  }
  return "?";
}

void Enable(bool on) { enabled.store(on, std::memory_order_relaxed); }
bool Enabled() { return enabled.load(std::memory_order_relaxed); }

void Reset() {
  for (int i = 0; i < kOps; ++i) {
    nanoseconds[i].store(0, std::memory_order_relaxed);
    calls[i].store(0, std::memory_order_relaxed);
  }
}

int64_t Nanoseconds(Op op) {
  return nanoseconds[static_cast<int>(op)].load(std::memory_order_relaxed);
}
int64_t Calls(Op op) { return calls[static_cast<int>(op)].load(std::memory_order_relaxed); }

void Add(Op op, int64_t ns) {
  nanoseconds[static_cast<int>(op)].fetch_add(ns, std::memory_order_relaxed);
  calls[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace engine::profile
