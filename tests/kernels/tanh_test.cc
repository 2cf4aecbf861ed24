// Tanh against tanh in double precision.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace engine::kernels::testing {
namespace {

TEST(TanhTest, MatchesDoublePrecision) {
  std::mt19937 rng(8);
  std::vector<float> x = Uniform(4099, -12.0f, 12.0f, rng);
  // Tiny, zero, signed and saturating values.
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-7f, 1e-3f, 20.0f, -20.0f, 100.0f}) x.push_back(v);
  const std::vector<float> input = x;
  Tanh(x.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(static_cast<double>(input[i]));
    // libm's tanhf is within an ulp or two: 2 eps relative (and at most
    // 2.4e-7 absolute since |tanh| <= 1), well inside the 1e-6 asked for.
    EXPECT_LE(std::fabs(x[i] - want), 2 * FLT_EPSILON * std::fabs(want)) << input[i];
  }
}

}  // namespace
}  // namespace engine::kernels::testing
