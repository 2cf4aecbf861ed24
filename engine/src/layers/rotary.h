// Rotary position embedding (RoFormer's RoPE) of Q and K, as the
// transformers / remote-code implementations of NomicBert, GTE and
// ModernBERT define it: dimension pair i of every head turns by
// position * inv_freq(i) (the attention kernel turns Q and K as it reads
// them: kernels::RotaryView). The angles' cosines and sines are tabulated at
// load for every position a sequence can have, in double: torch's float32
// tables are off by up to ~1e-4 rad at a few thousand positions, a rounding
// error of that implementation rather than part of the model.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/config.h"

namespace engine {

struct RotaryTable {
  int pairs = 0;  // rotated pairs per head (rotated dims / 2)
  bool interleaved = false;
  int64_t positions = 0;
  std::vector<float> cos;  // [positions][pairs]
  std::vector<float> sin;

  bool empty() const { return pairs == 0; }
};

// The table of `rotary` with theta `base` for heads of `head_size` and
// positions [0, positions).
RotaryTable MakeRotaryTable(const RotaryConfig& rotary, float base, int head_size,
                            int64_t positions);

}  // namespace engine
