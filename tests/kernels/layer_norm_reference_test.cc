// Validates the oracle: the scalar reference against the formula evaluated in
// double precision in the test itself, so the reference is not its own judge.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "layer_norm_case.h"

namespace engine::kernels::testing {
namespace {

// The reference sums in float with Kahan compensation, so its statistics are
// within a few roundings of exact whatever the length: 4 eps (4.8e-7) of the
// error scale of ExactLayerNorm covers x = r + s + b (2 roundings), the
// rounded mean and rstd, and the final multiply-add.
constexpr double kReferenceUlps = 4.0;

void ExpectNearExact(const LayerNormCase& c, const std::vector<float>& y) {
  const LayerNormExpected e = ExactLayerNorm(c);
  double worst = 0.0;
  int64_t worst_at = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double ratio = std::fabs(y[i] - e.y[i]) / (kFloatEps * e.scale[i]);
    if (ratio > worst) {
      worst = ratio;
      worst_at = static_cast<int64_t>(i);
    }
  }
  EXPECT_LE(worst, kReferenceUlps) << "hidden " << c.hidden << " element " << worst_at << ": got "
                                   << y[worst_at] << ", exact " << e.y[worst_at];
}

TEST(LayerNormReferenceTest, MatchesDoublePrecisionFormula) {
  for (int64_t hidden : HiddenSizes()) {
    for (int flags = 0; flags < 4; ++flags) {
      const LayerNormCase c = LayerNormCase::Random(3, hidden, flags & 1, flags & 2,
                                                    static_cast<uint32_t>(hidden * 4 + flags));
      std::vector<float> out(c.residual.size());
      AddLayerNormWithIsa(Isa::kScalar, c.Args(out.data(), nullptr));
      ExpectNearExact(c, out);
    }
  }
}

TEST(LayerNormReferenceTest, WritesSumAsResidualOut) {
  const LayerNormCase c = LayerNormCase::Random(4, 100, true, true, 7);
  std::vector<float> out(c.residual.size()), residual_out(c.residual.size());
  AddLayerNormWithIsa(Isa::kScalar, c.Args(out.data(), residual_out.data()));
  const LayerNormExpected e = ExactLayerNorm(c);
  for (size_t i = 0; i < out.size(); ++i) {
    // Two float additions: within one ulp-ish of the exact sum of magnitude <= 21.
    ASSERT_NEAR(residual_out[i], e.x[i], 4 * kFloatEps * 32) << i;
  }
  ExpectNearExact(c, out);
}

TEST(LayerNormReferenceTest, SingleElementRowIsBeta) {
  // mean == x, so x - mean is exactly 0 and y == beta whatever eps is.
  LayerNormCase c = LayerNormCase::Random(5, 1, true, true, 11);
  std::vector<float> out(c.residual.size());
  AddLayerNormWithIsa(Isa::kScalar, c.Args(out.data(), nullptr));
  for (float y : out) EXPECT_EQ(y, c.beta[0]);
}

}  // namespace
}  // namespace engine::kernels::testing
