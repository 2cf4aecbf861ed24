// Shared helpers of the kernel tests: seeded random data and the ISAs to run.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace engine::kernels::testing {

inline std::vector<float> Uniform(int64_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Hidden sizes: every tail length of both vector widths, and model sizes.
inline std::vector<int64_t> HiddenSizes() {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 64; ++n) sizes.push_back(n);
  for (int64_t n : {127, 128, 129, 255, 384, 768, 1000, 1024, 3072, 4096}) sizes.push_back(n);
  return sizes;
}

inline std::string IsaParamName(const ::testing::TestParamInfo<Isa>& info) {
  return IsaName(info.param);
}

// For fixtures parameterized by ISA: skip when the CPU cannot run it.
#define SKIP_IF_ISA_UNSUPPORTED(isa)                                            \
  if (!::engine::kernels::IsaSupported(isa)) {                                  \
    GTEST_SKIP() << "CPU does not support " << ::engine::kernels::IsaName(isa); \
  }

}  // namespace engine::kernels::testing
