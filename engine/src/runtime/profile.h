// Optional per-op timing of the forward pass, for `encoder-cli bench
// --profile`. Off by default: a disabled ScopedOp costs one relaxed load.
// Times are wall-clock nanoseconds summed per op kind, each timed on the
// thread that runs the op (outside the OpenMP parallel regions). The softmax
// is interleaved with attention's other kernels block by block, so it is
// part of attention's time.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace engine::profile {

enum class Op {
  kEmbed,       // embedding gather + LayerNorm
  kMatmul,      // oneDNN matmuls (fp32: with bias/GELU post-ops fused)
  kAttention,   // attention core: Q K^T, softmax, P V (wall time)
  kAddNorm,     // fused residual + bias + LayerNorm (int8: with dequantization)
  kGelu,        // int8: dequantize + bias + GELU + quantize epilogue
  kQuantize,    // int8: activation quantization not fused elsewhere; bf16: rounding to bf16
  kDequantize,  // int8: dequantize + bias epilogues not fused into Add & Norm
  kGate,        // gated FFNs: act(gate) * up (int8: with dequantize and quantize)
  kCount,
};

const char* OpName(Op op);

// Turns collection on or off for the whole process; Reset zeroes the table.
void Enable(bool on);
bool Enabled();
void Reset();
// Summed nanoseconds and calls of one op since the last Reset.
int64_t Nanoseconds(Op op);
int64_t Calls(Op op);
void Add(Op op, int64_t nanoseconds);

class ScopedOp {
 public:
  explicit ScopedOp(Op op) : op_(op), on_(Enabled()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedOp() {
    if (on_) {
      Add(op_, std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start_)
                   .count());
    }
  }
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;

 private:
  Op op_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace engine::profile
