// The FFN's activation kernels (Activate, GatedActivation,
// DequantizeGateQuantize): each ISA against the activations written out
// here in double, and the vector ISAs against the scalar reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace engine::kernels::testing {
namespace {

double Act(Eltwise act, double x) {
  switch (act) {
    case Eltwise::kGeluErf:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Eltwise::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Eltwise::kRelu:
      return x > 0 ? x : 0.0;
    case Eltwise::kSilu:
      return x / (1.0 + std::exp(-x));
    case Eltwise::kNone:
      break;
  }
  return x;
}

constexpr Eltwise kActs[] = {Eltwise::kGeluErf, Eltwise::kGeluTanh, Eltwise::kRelu, Eltwise::kSilu};

std::vector<float> RandomRows(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(rows * 2 * cols));
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(GatedActivationReferenceTest, IsTheActivatedHalfTimesTheOther) {
  const int64_t rows = 3, cols = 100;
  const std::vector<float> x = RandomRows(rows, cols, 1);
  for (Eltwise act : kActs) {
    std::vector<float> out(rows * cols);
    GatedActivationWithIsa(Isa::kScalar, x.data(), rows, cols, act, out.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const double want = Act(act, x[r * 2 * cols + c]) * x[r * 2 * cols + cols + c];
        // libm in float plus one product: a few ulps of |want| (|x| <~ 12).
        ASSERT_NEAR(out[r * cols + c], want, 1e-6 * std::max(1.0, std::fabs(want)))
            << static_cast<int>(act) << " " << r << " " << c;
      }
    }
  }
}

std::string GateParamName(const ::testing::TestParamInfo<std::tuple<Isa, Eltwise>>& info) {
  static const char* const kNames[] = {"none", "gelu_erf", "gelu_tanh", "relu", "silu"};
  return std::string(IsaName(std::get<0>(info.param))) + "_" +
         kNames[static_cast<int>(std::get<1>(info.param))];
}

// Every pre-activation from -12 to 12 in steps of 1/64 and a few far out
// (where a clamped approximation can drift with |x|), then rows of
// random values: lengths that end on every tail (1, 7, 16, 33, 1152).
class ActivateKernelTest : public ::testing::TestWithParam<std::tuple<Isa, Eltwise>> {};

TEST_P(ActivateKernelTest, MatchesDouble) {
  const auto [isa, act] = GetParam();
  SKIP_IF_ISA_UNSUPPORTED(isa);
  std::vector<std::vector<float>> cases;
  cases.emplace_back();
  for (int i = -768; i <= 768; ++i) cases.back().push_back(static_cast<float>(i) / 64.0f);
  for (float far : {20.0f, 100.0f, 1e4f}) cases.back().insert(cases.back().end(), {far, -far});
  for (int64_t cols : {1, 7, 16, 33, 1152}) cases.push_back(RandomRows(3, cols, 9));
  for (const std::vector<float>& x : cases) {
    std::vector<float> got = x;
    ActivateWithIsa(isa, got.data(), 1, static_cast<int64_t>(got.size()), act);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = Act(act, x[i]);
      // The vector GELU (erf) is x (1 + erf) / 2 with a rational fit of
      // erf (bench/engine/fit_erf.py): 1 + erf rounds to ~1e-7 near the
      // negative tail, so 2e-7 |x| absolute; 1e-6 relative above. The
      // others (exp-based, libm) are within a few ulps. A wrong constant is
      // off by 1e-3 or more.
      ASSERT_NEAR(got[i], want, 2e-7 * std::max(1.0f, std::fabs(x[i])) + 1e-6 * std::fabs(want))
          << "x = " << x[i] << ", " << got.size() << " values";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ActivateKernelTest,
                         ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2,
                                                              Isa::kAvx512),
                                            ::testing::ValuesIn(kActs)),
                         GateParamName);

class GateKernelTest : public ::testing::TestWithParam<std::tuple<Isa, Eltwise>> {};

TEST_P(GateKernelTest, FloatMatchesReference) {
  const auto [isa, act] = GetParam();
  SKIP_IF_ISA_UNSUPPORTED(isa);
  for (int64_t cols : {1, 7, 16, 33, 1152}) {
    const std::vector<float> x = RandomRows(4, cols, static_cast<uint32_t>(cols));
    std::vector<float> got(4 * cols), want(4 * cols);
    GatedActivationWithIsa(isa, x.data(), 4, cols, act, got.data());
    GatedActivationWithIsa(Isa::kScalar, x.data(), 4, cols, act, want.data());
    // The vector activations' error (ActivateKernelTest: 2e-7 |gate|
    // absolute, 1e-6 relative), times |up|.
    for (int64_t i = 0; i < 4 * cols; ++i) {
      const float gate = x[(i / cols) * 2 * cols + i % cols];
      const float up = x[(i / cols) * 2 * cols + cols + i % cols];
      ASSERT_NEAR(
          got[i], want[i],
          2e-7 * std::max(1.0f, std::fabs(gate)) * std::fabs(up) + 1e-6 * std::fabs(want[i]))
          << cols << " " << i;
    }
  }
}

// A [rows, 2 cols] int32 accumulator with its dequantization parameters.
struct GateCase {
  int64_t rows, cols;
  std::vector<int32_t> acc;
  std::vector<float> row_scale, col_scale, bias;
  std::vector<int32_t> row_zero, col_sum;

  GateCase(int64_t r, int64_t c, uint32_t seed)
      : rows(r),
        cols(c),
        acc(r * 2 * c),
        row_scale(r),
        col_scale(2 * c),
        bias(2 * c),
        row_zero(r),
        col_sum(2 * c) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> a(-20000, 20000), z(0, 255), s(-3000, 3000);
    std::uniform_real_distribution<float> u(0.5f, 1.5f), b(-1.0f, 1.0f);
    for (int32_t& v : acc) v = a(rng);
    for (int64_t i = 0; i < r; ++i) row_scale[i] = 2e-3f * u(rng), row_zero[i] = z(rng);
    for (int64_t i = 0; i < 2 * c; ++i) {
      col_scale[i] = 1e-3f * u(rng);
      bias[i] = b(rng);
      col_sum[i] = s(rng);
    }
  }
  Int8Accumulator View(int32_t* a) const {
    Int8Accumulator in;
    in.acc = a;
    in.row_scale = row_scale.data();
    in.row_zero = row_zero.data();
    in.col_scale = col_scale.data();
    in.col_sum = col_sum.data();
    in.bias = bias.data();
    return in;
  }
  double Dequantized(int64_t r, int64_t i) const {
    return (static_cast<double>(acc[r * 2 * cols + i]) -
            static_cast<double>(row_zero[r]) * col_sum[i]) *
               row_scale[r] * col_scale[i] +
           bias[i];
  }
};

struct GateResult {
  std::vector<uint8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> zero;
};

GateResult RunGate(Isa isa, const GateCase& c, Eltwise act) {
  GateResult r{std::vector<uint8_t>(c.rows * c.cols), std::vector<float>(c.rows),
               std::vector<int32_t>(c.rows)};
  std::vector<int32_t> acc = c.acc;  // staged over by the kernel
  DequantizeGateQuantizeWithIsa(isa, c.View(acc.data()), c.rows, c.cols, act,
                                {r.q.data(), r.scale.data(), r.zero.data()});
  return r;
}

TEST(DequantizeGateQuantizeReferenceTest, QuantizesTheGatedDequantizedValues) {
  const GateCase c(3, 200, 5);
  for (Eltwise act : kActs) {
    const GateResult got = RunGate(Isa::kScalar, c, act);
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t i = 0; i < c.cols; ++i) {
        const double want = Act(act, c.Dequantized(r, i)) * c.Dequantized(r, c.cols + i);
        const double back = (got.q[r * c.cols + i] - got.zero[r]) * double{got.scale[r]};
        // Half a quantization step, plus float rounding of the inputs.
        ASSERT_LE(std::fabs(back - want), 0.5 * got.scale[r] * 1.001 + 1e-5)
            << static_cast<int>(act) << " " << r << " " << i;
      }
    }
  }
}

TEST_P(GateKernelTest, Int8MatchesReference) {
  const auto [isa, act] = GetParam();
  SKIP_IF_ISA_UNSUPPORTED(isa);
  for (int64_t cols : {1, 15, 64, 1152}) {
    const GateCase c(3, cols, static_cast<uint32_t>(cols + 1));
    const GateResult got = RunGate(isa, c, act);
    const GateResult want = RunGate(Isa::kScalar, c, act);
    for (int64_t r = 0; r < c.rows; ++r) {
      EXPECT_NEAR(got.scale[r], want.scale[r], 1e-5 * want.scale[r]) << cols << " " << r;
      EXPECT_LE(std::abs(got.zero[r] - want.zero[r]), 1) << cols << " " << r;
    }
    // Values on a rounding boundary may land one step apart.
    for (size_t i = 0; i < want.q.size(); ++i) {
      ASSERT_LE(std::abs(got.q[i] - want.q[i]), 1) << cols << " " << i;
    }
  }
}

// ---- two-level: DequantizeGateQuantize with a residual ----

struct TwoLevelResult {
  GateResult hi, lo;
};

TwoLevelResult RunTwoLevelGate(Isa isa, const GateCase& c, Eltwise act) {
  auto empty = [&] {
    return GateResult{std::vector<uint8_t>(c.rows * c.cols), std::vector<float>(c.rows),
                      std::vector<int32_t>(c.rows)};
  };
  TwoLevelResult r{empty(), empty()};
  std::vector<int32_t> acc = c.acc;  // staged over by the kernel
  DequantizeGateQuantizeWithIsa(isa, c.View(acc.data()), c.rows, c.cols, act,
                                {r.hi.q.data(), r.hi.scale.data(), r.hi.zero.data()},
                                {r.lo.q.data(), r.lo.scale.data(), r.lo.zero.data()});
  return r;
}

// Both levels together reproduce act(gate) * up (in double from the
// accumulator) within half a step of the second level, a 255th of the
// first's: 16 bits where one level has 8. `tolerance` covers the float
// activation's own error.
void ExpectTwoLevelReconstructs(const GateCase& c, Eltwise act, const TwoLevelResult& got,
                                double relative_tolerance) {
  for (int64_t r = 0; r < c.rows; ++r) {
    // The residual spans about one step of the first level (a few float
    // roundings more where a value sits on a rounding boundary), unless it
    // is all zeros (scale 1 by convention; relu rows of one column).
    const auto lo_row = got.lo.q.begin() + r * c.cols;
    const bool zeros = std::all_of(lo_row, lo_row + c.cols, [](uint8_t q) { return q == 0; }) &&
                       got.lo.zero[r] == 0;
    if (!zeros) {
      EXPECT_LE(got.lo.scale[r], got.hi.scale[r] / 255 * (1 + 1e-4)) << "row " << r;
    }
    for (int64_t i = 0; i < c.cols; ++i) {
      const double want = Act(act, c.Dequantized(r, i)) * c.Dequantized(r, c.cols + i);
      const int64_t k = r * c.cols + i;
      const double back = (got.hi.q[k] - got.hi.zero[r]) * double{got.hi.scale[r]} +
                          (got.lo.q[k] - got.lo.zero[r]) * double{got.lo.scale[r]};
      ASSERT_LE(std::fabs(back - want),
                0.5 * got.lo.scale[r] * 1.001 + relative_tolerance * std::max(1.0, std::fabs(want)))
          << static_cast<int>(act) << " row " << r << " col " << i;
    }
  }
}

TEST(DequantizeGateQuantizeReferenceTest, TwoLevelsReproduceTheGatedValues) {
  const GateCase c(3, 200, 5);
  for (Eltwise act : kActs) {
    const TwoLevelResult got = RunTwoLevelGate(Isa::kScalar, c, act);
    // libm in float plus one product: a few ulps.
    ExpectTwoLevelReconstructs(c, act, got, 1e-6);
    // The first level is the one-level quantization, unchanged.
    const GateResult one = RunGate(Isa::kScalar, c, act);
    EXPECT_EQ(got.hi.q, one.q);
    EXPECT_EQ(got.hi.scale, one.scale);
    EXPECT_EQ(got.hi.zero, one.zero);
  }
}

TEST_P(GateKernelTest, TwoLevelMatchesReference) {
  const auto [isa, act] = GetParam();
  SKIP_IF_ISA_UNSUPPORTED(isa);
  for (int64_t cols : {1, 7, 15, 16, 33, 64, 1152, 3072}) {
    const GateCase c(3, cols, static_cast<uint32_t>(cols + 2));
    const TwoLevelResult got = RunTwoLevelGate(isa, c, act);
    const TwoLevelResult want = RunTwoLevelGate(Isa::kScalar, c, act);
    SCOPED_TRACE(cols);
    // The vector activations' ~1e-7 relative error, times |up| (see
    // FloatMatchesReference), is below a second-level step here; a first
    // level read back wrongly or a residual of the wrong sign is off by
    // whole first-level steps.
    ExpectTwoLevelReconstructs(c, act, got, 2e-6);
    // The second level's scale follows the residual's extremes, which a
    // first-level value on a rounding boundary moves: not compared.
    for (int64_t r = 0; r < c.rows; ++r) {
      EXPECT_NEAR(got.hi.scale[r], want.hi.scale[r], 1e-5 * want.hi.scale[r]) << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, GateKernelTest,
                         ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                                            ::testing::ValuesIn(kActs)),
                         GateParamName);

}  // namespace
}  // namespace engine::kernels::testing
