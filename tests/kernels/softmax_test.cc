// ScaledSoftmax for every ISA against the formula in double precision.
#include <gtest/gtest.h>
#include <omp.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace engine::kernels::testing {
namespace {

constexpr double kSoftmaxEps = FLT_EPSILON;

// Tolerance of y_c, relative: z_c = scale * x_c - max is rounded once to
// float before exp, an absolute error of eps/2 * |z_c| in the exponent and so
// a relative one in y_c; exp itself is within ~2 ulp (Cephes polynomial or
// libm), the sum and the division add a few roundings. 8 eps (~1e-6) +
// eps * |z_c|. Exact values below FLT_MIN may flush to zero: FLT_MIN absolute.
bool WithinTolerance(float got, double want, double z) {
  return std::fabs(got - want) <= (8.0 * kSoftmaxEps + kSoftmaxEps * std::fabs(z)) * want + FLT_MIN;
}

void ExpectSoftmax(Isa isa, const std::vector<float>& input, int64_t rows, int64_t cols,
                   float scale) {
  std::vector<float> x = input;
  ScaledSoftmaxWithIsa(isa, x.data(), rows, cols, scale);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = input.data() + r * cols;
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c) max = std::fmax(max, double{scale} * in[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(double{scale} * in[c] - max);
    for (int64_t c = 0; c < cols; ++c) {
      const double z = double{scale} * in[c] - max;
      const double want = std::exp(z) / sum;
      const float got = x[r * cols + c];
      ASSERT_TRUE(WithinTolerance(got, want, z))
          << IsaName(isa) << " cols " << cols << " scale " << scale << " [" << r << "," << c
          << "]: got " << got << ", want " << want;
    }
  }
}

class ScaledSoftmaxTest : public ::testing::TestWithParam<Isa> {};

TEST_P(ScaledSoftmaxTest, MatchesDoublePrecision) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(3);
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 64; ++n) sizes.push_back(n);
  for (int64_t n : {127, 128, 129, 384, 512, 1000}) sizes.push_back(n);
  // 1/sqrt(64) as in attention; 1 gives exponents down to -80 (deep
  // underflow of small terms); negative and zero scales flip or flatten.
  for (float scale : {0.125f, 1.0f, -0.5f, 0.0f}) {
    for (int64_t cols : sizes) {
      ExpectSoftmax(GetParam(), Uniform(3 * cols, -40.0f, 40.0f, rng), 3, cols, scale);
    }
  }
}

TEST_P(ScaledSoftmaxTest, NegativeInfinityGivesZero) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1.0f, -inf, 2.0f, -1e30f, 0.5f, -inf, -inf, 3.0f, -inf};
  ScaledSoftmaxWithIsa(GetParam(), x.data(), 1, static_cast<int64_t>(x.size()), 0.5f);
  for (size_t i : {1, 3, 5, 6, 8}) EXPECT_EQ(x[i], 0.0f) << i;
  float sum = 0.0f;
  for (float v : x) sum += v;
  EXPECT_NEAR(sum, 1.0f, 4 * FLT_EPSILON);
}

INSTANTIATE_TEST_SUITE_P(Isas, ScaledSoftmaxTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512), IsaParamName);

TEST(ScaledSoftmaxDispatchTest, AllThreadsMatchSingleThreadBestIsa) {
  std::mt19937 rng(4);
  const std::vector<float> input = Uniform(257 * 384, -10.0f, 10.0f, rng);
  std::vector<float> parallel = input, serial = input;
  ScaledSoftmax(parallel.data(), 257, 384, 0.125f);
  ScaledSoftmaxWithIsa(BestIsa(), serial.data(), 257, 384, 0.125f);
  EXPECT_EQ(parallel, serial);
}

// Rows are split into contiguous blocks over the team: with any team size
// and row counts no block size divides, every row is done once.
TEST(ScaledSoftmaxDispatchTest, EveryRowOnceWithAnyTeamSize) {
  std::mt19937 rng(5);
  const int saved_threads = omp_get_max_threads();
  for (int threads : {2, 3, 5}) {
    for (const auto& [rows, cols] :
         {std::pair<int64_t, int64_t>{97, 1024}, {259, 1024}, {9, 32768}}) {
      const std::vector<float> input = Uniform(rows * cols, -10.0f, 10.0f, rng);
      std::vector<float> parallel = input, serial = input;
      omp_set_num_threads(threads);
      ScaledSoftmax(parallel.data(), rows, cols, 0.125f);
      ScaledSoftmaxWithIsa(BestIsa(), serial.data(), rows, cols, 0.125f);
      EXPECT_EQ(parallel, serial) << threads << " threads, " << rows << " x " << cols;
    }
  }
  omp_set_num_threads(saved_threads);
}

}  // namespace
}  // namespace engine::kernels::testing
