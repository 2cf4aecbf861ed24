// bfloat16 as raw bits (uint16_t): the upper half of a float32, so its
// range is float32's with 8 bits of significand.
#pragma once

#include <cstdint>
#include <cstring>

namespace engine::kernels {

// Rounds to the nearest bf16, ties to even (as oneDNN's and PyTorch's
// conversions do); NaN stays NaN (quiet).
inline uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float Bf16ToFloat(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// out[i] = FloatToBf16(in[i]) for i < n, on the OpenMP threads when n is large.
void ConvertToBf16(const float* in, int64_t n, uint16_t* out);

}  // namespace engine::kernels
