// The int8 kernels (quantize, dequantize, the FFN's activation epilogue and
// Add & Norm over an int8 accumulator): each vector ISA against the scalar
// reference, and the reference against the formulas in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace engine::kernels::testing {
namespace {

constexpr double kEps = std::numeric_limits<float>::epsilon();

// A row-quantized matrix and the buffers it lives in.
struct Quantized {
  std::vector<uint8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> zero;
  Quantized(int64_t rows, int64_t cols) : q(rows * cols), scale(rows), zero(rows) {}
  QuantizedRows View() { return {q.data(), scale.data(), zero.data()}; }
};

// q, scale and zero of two quantizations of (nearly) the same values: the
// parameters within `scale_rel` relative (1 step of zero), every q within 1
// step (a value on a rounding boundary may go either way), and at most 2%
// of q off by one. Identical inputs must pass with scale_rel = 0.
void ExpectSameQuantization(const Quantized& got, const Quantized& want, double scale_rel) {
  for (size_t r = 0; r < want.scale.size(); ++r) {
    EXPECT_LE(std::fabs(got.scale[r] - want.scale[r]), scale_rel * want.scale[r]) << "row " << r;
    EXPECT_LE(std::abs(got.zero[r] - want.zero[r]), scale_rel == 0 ? 0 : 1) << "row " << r;
  }
  size_t off = 0;
  for (size_t i = 0; i < want.q.size(); ++i) {
    ASSERT_LE(std::abs(got.q[i] - want.q[i]), scale_rel == 0 ? 0 : 1) << "element " << i;
    off += got.q[i] != want.q[i];
  }
  EXPECT_LE(off, want.q.size() / 50 + 1);
}

// (q - zero) * scale reproduces x within half a step (the rounding), plus a
// few float ulps of the products; and 0 maps to exactly zero.
void ExpectQuantizes(const float* x, int64_t rows, int64_t cols, const Quantized& got) {
  for (int64_t r = 0; r < rows; ++r) {
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < cols; ++i) {
      lo = std::min<double>(lo, x[r * cols + i]);
      hi = std::max<double>(hi, x[r * cols + i]);
    }
    const double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
    EXPECT_NEAR(got.scale[r], scale, 4 * kEps * scale) << "row " << r;
    EXPECT_GE(got.zero[r], 0);
    EXPECT_LE(got.zero[r], 255);
    for (int64_t i = 0; i < cols; ++i) {
      const double back = (got.q[r * cols + i] - got.zero[r]) * double{got.scale[r]};
      ASSERT_LE(std::fabs(back - x[r * cols + i]), got.scale[r] * (0.5 + 1e-4))
          << "row " << r << " col " << i;
    }
  }
}

// ---- QuantizeRows ----

class QuantizeRowsTest : public ::testing::TestWithParam<Isa> {};

TEST_P(QuantizeRowsTest, MatchesReferenceExactly) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (int64_t cols : HiddenSizes()) {
    std::mt19937 rng(static_cast<uint32_t>(cols));
    // Rows: mixed signs, all positive, all negative, zeros.
    const int64_t rows = 4;
    std::vector<float> x = Uniform(rows * cols, -3.0f, 5.0f, rng);
    for (int64_t i = 0; i < cols; ++i) {
      x[cols + i] = std::fabs(x[cols + i]);
      x[2 * cols + i] = -std::fabs(x[2 * cols + i]);
      x[3 * cols + i] = 0.0f;
    }
    Quantized got(rows, cols), want(rows, cols);
    QuantizeRowsWithIsa(GetParam(), x.data(), rows, cols, got.View());
    QuantizeRowsWithIsa(Isa::kScalar, x.data(), rows, cols, want.View());
    // Same float operations in the same order, min/max exact: identical.
    SCOPED_TRACE(cols);
    ExpectSameQuantization(got, want, 0);
    EXPECT_EQ(want.zero[2], 255);  // All negative: 0 is the top of the range.
    EXPECT_EQ(want.zero[1], 0);
    EXPECT_EQ(want.scale[3], 1.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, QuantizeRowsTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         IsaParamName);

TEST(QuantizeRowsReferenceTest, RoundTripsWithinHalfAStep) {
  for (int64_t cols : {1, 7, 384, 3072}) {
    std::mt19937 rng(static_cast<uint32_t>(cols));
    std::vector<float> x = Uniform(3 * cols, -2.0f, 7.0f, rng);
    Quantized got(3, cols);
    QuantizeRowsWithIsa(Isa::kScalar, x.data(), 3, cols, got.View());
    ExpectQuantizes(x.data(), 3, cols, got);
  }
}

// ---- an int8 accumulator with its dequantization parameters ----

struct AccCase {
  int64_t rows, cols;
  std::vector<int32_t> acc, zero, col_sum;
  std::vector<float> row_scale, col_scale, bias;

  // Magnitudes of a 384-3072 deep u8 x s8 product: dequantized values of
  // order 1-10.
  static AccCase Random(int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    AccCase c{rows, cols, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    std::uniform_int_distribution<int32_t> acc(-300000, 300000), zero(0, 255), sum(-3000, 3000);
    for (int64_t i = 0; i < rows * cols; ++i) c.acc.push_back(acc(rng));
    for (int64_t r = 0; r < rows; ++r) c.zero.push_back(zero(rng));
    for (int64_t i = 0; i < cols; ++i) c.col_sum.push_back(sum(rng));
    c.row_scale = Uniform(rows, 0.005f, 0.05f, rng);
    c.col_scale = Uniform(cols, 1e-4f, 1e-3f, rng);
    c.bias = Uniform(cols, -1.0f, 1.0f, rng);
    return c;
  }
  // A two-level accumulator's second part (kernels.h), empty for one
  // level: the residual's product, its row scales a 255th of the first's.
  std::vector<int32_t> residual_acc, residual_zero;
  std::vector<float> residual_row_scale;

  static AccCase TwoLevel(int64_t rows, int64_t cols, uint32_t seed) {
    AccCase c = Random(rows, cols, seed);
    std::mt19937 rng(seed + 100);
    std::uniform_int_distribution<int32_t> acc(-300000, 300000), zero(0, 255);
    for (int64_t i = 0; i < rows * cols; ++i) c.residual_acc.push_back(acc(rng));
    for (int64_t r = 0; r < rows; ++r) {
      c.residual_zero.push_back(zero(rng));
      c.residual_row_scale.push_back(c.row_scale[r] / 255);
    }
    return c;
  }
  Int8Accumulator View(int32_t* acc_data) const {
    Int8Accumulator a;
    a.acc = acc_data;
    a.row_scale = row_scale.data();
    a.row_zero = zero.data();
    a.col_scale = col_scale.data();
    a.col_sum = col_sum.data();
    a.bias = bias.data();
    if (!residual_acc.empty()) {
      a.residual_acc = residual_acc.data();
      a.residual_row_scale = residual_row_scale.data();
      a.residual_row_zero = residual_zero.data();
    }
    return a;
  }
  // The products of both levels before the column scale, in double.
  double Level(int64_t r, int64_t i) const {
    return (static_cast<double>(acc[r * cols + i]) - static_cast<double>(zero[r]) * col_sum[i]) *
           row_scale[r];
  }
  double ResidualLevel(int64_t r, int64_t i) const {
    if (residual_acc.empty()) return 0;
    return (static_cast<double>(residual_acc[r * cols + i]) -
            static_cast<double>(residual_zero[r]) * col_sum[i]) *
           residual_row_scale[r];
  }
  // The dequantized value in double, and the float rounding it is entitled
  // to (the int32 -> float conversions, the products, the sums).
  double Exact(int64_t r, int64_t i) const {
    return (Level(r, i) + ResidualLevel(r, i)) * col_scale[i] + bias[i];
  }
  double Error(int64_t r, int64_t i) const {
    return 4 * kEps *
           ((std::fabs(Level(r, i)) + std::fabs(ResidualLevel(r, i))) * col_scale[i] +
            std::fabs(bias[i]));
  }
};

// ---- Dequantize ----

class DequantizeTest : public ::testing::TestWithParam<Isa> {};

TEST_P(DequantizeTest, MatchesReference) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (int64_t cols : HiddenSizes()) {
    AccCase c = AccCase::Random(3, cols, static_cast<uint32_t>(cols));
    std::vector<float> got(3 * cols), want(3 * cols);
    DequantizeWithIsa(GetParam(), c.View(c.acc.data()), 3, cols, got.data());
    DequantizeWithIsa(Isa::kScalar, c.View(c.acc.data()), 3, cols, want.data());
    // Both within Error() of exact (the kernel fuses the last multiply-add).
    for (int64_t i = 0; i < 3 * cols; ++i) {
      ASSERT_LE(std::fabs(got[i] - want[i]), 2 * c.Error(i / cols, i % cols)) << cols << " " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, DequantizeTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         IsaParamName);

TEST_P(DequantizeTest, TwoLevelMatchesReference) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (int64_t cols : HiddenSizes()) {
    AccCase c = AccCase::TwoLevel(3, cols, static_cast<uint32_t>(cols));
    std::vector<float> got(3 * cols), want(3 * cols);
    DequantizeWithIsa(GetParam(), c.View(c.acc.data()), 3, cols, got.data());
    DequantizeWithIsa(Isa::kScalar, c.View(c.acc.data()), 3, cols, want.data());
    for (int64_t i = 0; i < 3 * cols; ++i) {
      ASSERT_LE(std::fabs(got[i] - want[i]), 2 * c.Error(i / cols, i % cols)) << cols << " " << i;
    }
  }
}

TEST(DequantizeReferenceTest, MatchesFormulaInDouble) {
  for (const AccCase& c : {AccCase::Random(5, 768, 1), AccCase::TwoLevel(5, 768, 2)}) {
    std::vector<float> got(5 * 768);
    AccCase in = c;
    DequantizeWithIsa(Isa::kScalar, in.View(in.acc.data()), 5, 768, got.data());
    for (int64_t i = 0; i < 5 * 768; ++i) {
      ASSERT_LE(std::fabs(got[i] - c.Exact(i / 768, i % 768)), c.Error(i / 768, i % 768))
          << i << (c.residual_acc.empty() ? "" : " two-level");
    }
  }
}

TEST(DequantizeReferenceTest, TwoLevelAddsTheResidualProduct) {
  // The second level moves each value by its own product (a 255th-scale
  // correction), not by zero: the epilogue reads it.
  AccCase two = AccCase::TwoLevel(2, 64, 3);
  AccCase one = two;
  one.residual_acc.clear();
  std::vector<float> with(2 * 64), without(2 * 64);
  DequantizeWithIsa(Isa::kScalar, two.View(two.acc.data()), 2, 64, with.data());
  DequantizeWithIsa(Isa::kScalar, one.View(one.acc.data()), 2, 64, without.data());
  for (int64_t i = 0; i < 2 * 64; ++i) {
    const double correction = two.ResidualLevel(i / 64, i % 64) * two.col_scale[i % 64];
    ASSERT_NEAR(with[i] - without[i], correction, two.Error(i / 64, i % 64)) << i;
  }
}

// ---- DequantizeActivateQuantize ----

double ExactActivation(Eltwise act, double x) {
  switch (act) {
    case Eltwise::kGeluErf:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Eltwise::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Eltwise::kRelu:
      return std::max(x, 0.0);
    case Eltwise::kSilu:
      return x / (1.0 + std::exp(-x));
    case Eltwise::kNone:
      break;
  }
  return x;
}

struct ActResult {
  std::vector<float> staged;  // the float activations left in the accumulator
  Quantized quantized;
};

ActResult RunActivation(Isa isa, const AccCase& c, Eltwise act) {
  ActResult r{std::vector<float>(c.rows * c.cols), Quantized(c.rows, c.cols)};
  std::vector<int32_t> acc = c.acc;  // Overwritten by the kernel.
  DequantizeActivateQuantizeWithIsa(isa, c.View(acc.data()), c.rows, c.cols, act,
                                    r.quantized.View());
  std::memcpy(r.staged.data(), acc.data(), acc.size() * sizeof(float));
  return r;
}

std::string ActivationParamName(const ::testing::TestParamInfo<std::tuple<Isa, Eltwise>>& info) {
  static const char* const kNames[] = {"none", "gelu_erf", "gelu_tanh", "relu", "silu"};
  return std::string(IsaName(std::get<0>(info.param))) + "_" +
         kNames[static_cast<int>(std::get<1>(info.param))];
}

class DequantizeActivateQuantizeTest : public ::testing::TestWithParam<std::tuple<Isa, Eltwise>> {};

TEST_P(DequantizeActivateQuantizeTest, MatchesReference) {
  const auto [isa, act] = GetParam();
  SKIP_IF_ISA_UNSUPPORTED(isa);
  for (int64_t cols : HiddenSizes()) {
    const AccCase c = AccCase::Random(3, cols, static_cast<uint32_t>(cols + 7));
    const ActResult got = RunActivation(isa, c, act);
    const ActResult want = RunActivation(Isa::kScalar, c, act);
    SCOPED_TRACE(cols);
    // The vector GELUs approximate erf (A&S 7.1.26, 1.5e-7 absolute) and
    // tanh (through exp) where the reference calls libm: 1e-6 of the
    // pre-activation's magnitude (|x| <= ~12 here) covers that and the
    // float rounding; a wrong constant or branch is off by 1e-3 or more.
    for (int64_t i = 0; i < c.rows * cols; ++i) {
      const double x = c.Exact(i / cols, i % cols);
      ASSERT_LE(std::fabs(got.staged[i] - want.staged[i]), 1e-6 * std::max(1.0, std::fabs(x)))
          << "element " << i << " pre-activation " << x;
    }
    // Ranges equal to the activations' tolerance: scales within 1e-5.
    ExpectSameQuantization(got.quantized, want.quantized, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, DequantizeActivateQuantizeTest,
                         ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                                            ::testing::Values(Eltwise::kGeluErf, Eltwise::kGeluTanh,
                                                              Eltwise::kRelu, Eltwise::kSilu,
                                                              Eltwise::kNone)),
                         ActivationParamName);

TEST(DequantizeActivateQuantizeReferenceTest, MatchesFormulaInDouble) {
  for (Eltwise act :
       {Eltwise::kGeluErf, Eltwise::kGeluTanh, Eltwise::kRelu, Eltwise::kSilu, Eltwise::kNone}) {
    const AccCase c = AccCase::Random(4, 1536, 3);
    const ActResult got = RunActivation(Isa::kScalar, c, act);
    for (int64_t i = 0; i < 4 * 1536; ++i) {
      const double x = c.Exact(i / 1536, i % 1536);
      // The dequantization's error (Error, slope of GELU <= 1.13) plus a
      // few ulps of |x| for libm and the float products.
      ASSERT_LE(std::fabs(got.staged[i] - ExactActivation(act, x)),
                1.2 * c.Error(i / 1536, i % 1536) + 8 * kEps * std::fabs(x))
          << "activation " << static_cast<int>(act) << " x " << x;
    }
    ExpectQuantizes(got.staged.data(), 4, 1536, got.quantized);
  }
}

TEST(DequantizeActivateQuantizeReferenceTest, OutputScaleMayAliasInputScale) {
  // The engine quantizes the FFN's output into the arrays holding its
  // input's scales: the same results as with separate arrays, bit for bit.
  const AccCase c = AccCase::Random(6, 100, 9);
  for (Isa isa : {Isa::kScalar, BestIsa()}) {
    const ActResult want = RunActivation(isa, c, Eltwise::kGeluErf);
    AccCase aliased = c;
    Quantized out(6, 100);
    out.scale = c.row_scale;
    out.zero = c.zero;
    Int8Accumulator in = aliased.View(aliased.acc.data());
    in.row_scale = out.scale.data();
    in.row_zero = out.zero.data();
    DequantizeActivateQuantizeWithIsa(isa, in, 6, 100, Eltwise::kGeluErf, out.View());
    ExpectSameQuantization(out, want.quantized, 0);
  }
}

// ---- AddLayerNormInt8 ----

struct NormCase {
  AccCase acc;
  std::vector<float> residual, gamma, beta;
  bool use_sublayer = true;
  static NormCase Random(int64_t rows, int64_t hidden, bool use_sublayer, uint32_t seed,
                         bool two_level = false) {
    NormCase c{
        two_level ? AccCase::TwoLevel(rows, hidden, seed) : AccCase::Random(rows, hidden, seed),
        {},
        {},
        {},
        use_sublayer};
    std::mt19937 rng(seed + 1);
    c.residual = Uniform(rows * hidden, -4.0f, 6.0f, rng);
    c.gamma = Uniform(hidden, 0.5f, 1.5f, rng);
    c.beta = Uniform(hidden, -1.0f, 1.0f, rng);
    return c;
  }
};

struct NormResult {
  std::vector<float> out, residual_out;
  Quantized quantized;
};

// pre_ln: residual_out separate from residual; else out aliases residual.
// alias: the output's scales written over the sublayer's, as the engine runs it.
NormResult RunNorm(Isa isa, const NormCase& c, bool pre_ln, bool quantize, bool all_threads,
                   bool alias = false) {
  const int64_t rows = c.acc.rows, n = c.acc.cols;
  NormResult r{{}, {}, Quantized(rows, n)};
  std::vector<float> residual = c.residual;
  std::vector<int32_t> acc = c.acc.acc;
  AddLayerNormInt8Args a;
  a.residual = residual.data();
  if (c.use_sublayer) a.sublayer = c.acc.View(acc.data());
  a.gamma = c.gamma.data();
  a.beta = c.beta.data();
  a.eps = 1e-12f;
  a.rows = rows;
  a.hidden = n;
  if (pre_ln) {
    r.out.resize(rows * n);
    a.out = r.out.data();
    a.residual_out = residual.data();  // In place, as the engine runs it.
  } else {
    a.out = residual.data();
  }
  if (quantize) a.quantized = r.quantized.View();
  if (alias) {
    r.quantized.scale = c.acc.row_scale;
    r.quantized.zero = c.acc.zero;
    a.sublayer.row_scale = r.quantized.scale.data();
    a.sublayer.row_zero = r.quantized.zero.data();
  }
  if (all_threads) {
    AddLayerNormInt8(a);
  } else {
    AddLayerNormInt8WithIsa(isa, a);
  }
  if (pre_ln) {
    r.residual_out = residual;
  } else {
    r.out = residual;
  }
  return r;
}

class AddLayerNormInt8Test : public ::testing::TestWithParam<Isa> {};

// A vector level's Add & Norm against the scalar one's. x differs by the
// fused multiply-add of the dequantization (an ulp of |x| <= ~15); the
// statistics by the summation order (a few ulps). Over sigma >= ~1 that is
// < 4e-6 at outputs of order 1-3; a wrong mean, eps or gamma moves them by
// 1e-3 or more.
void ExpectNormMatchesReference(const NormResult& got, const NormResult& want) {
  for (size_t i = 0; i < want.out.size(); ++i) {
    ASSERT_NEAR(got.out[i], want.out[i], 4e-6) << "element " << i;
  }
  for (size_t i = 0; i < want.residual_out.size(); ++i) {
    ASSERT_NEAR(got.residual_out[i], want.residual_out[i], 16 * kEps * 16) << i;
  }
  ExpectSameQuantization(got.quantized, want.quantized, 1e-5);
}

TEST_P(AddLayerNormInt8Test, MatchesReferenceForEveryPlacementAndSize) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (int64_t hidden : HiddenSizes()) {
    for (int flags = 0; flags < 4; ++flags) {
      const bool pre_ln = flags & 1, use_sublayer = flags & 2;
      const NormCase c =
          NormCase::Random(3, hidden, use_sublayer, static_cast<uint32_t>(hidden * 4 + flags));
      SCOPED_TRACE(::testing::Message()
                   << "hidden " << hidden << " pre_ln " << pre_ln << " sublayer " << use_sublayer);
      const NormResult got = RunNorm(GetParam(), c, pre_ln, true, false);
      const NormResult want = RunNorm(Isa::kScalar, c, pre_ln, true, false);
      ExpectNormMatchesReference(got, want);
    }
  }
}

TEST_P(AddLayerNormInt8Test, TwoLevelSublayerMatchesReference) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (int64_t hidden : HiddenSizes()) {
    for (bool pre_ln : {false, true}) {
      const NormCase c = NormCase::Random(3, hidden, true, static_cast<uint32_t>(hidden * 4 + 1),
                                          /*two_level=*/true);
      SCOPED_TRACE(::testing::Message() << "hidden " << hidden << " pre_ln " << pre_ln);
      const NormResult got = RunNorm(GetParam(), c, pre_ln, true, false);
      const NormResult want = RunNorm(Isa::kScalar, c, pre_ln, true, false);
      // As above: one more product and sum per element, of a 255th of the
      // magnitude.
      ExpectNormMatchesReference(got, want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AddLayerNormInt8Test, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         IsaParamName);

TEST(AddLayerNormInt8ReferenceTest, MatchesFormulaInDouble) {
  for (int kind = 0; kind < 3; ++kind) {
    const bool use_sublayer = kind != 1, two_level = kind == 2;
    const NormCase c = NormCase::Random(4, 768, use_sublayer, 17, two_level);
    const NormResult got = RunNorm(Isa::kScalar, c, /*pre_ln=*/true, true, false);
    const int64_t n = 768;
    for (int64_t r = 0; r < 4; ++r) {
      std::vector<double> x(n);
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i) {
        x[i] = c.residual[r * n + i] + (use_sublayer ? c.acc.Exact(r, i) : 0.0);
        mean += x[i] / n;
      }
      for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean) / n;
      for (int64_t i = 0; i < n; ++i) {
        const double y = c.gamma[i] * (x[i] - mean) / std::sqrt(var + 1e-12) + c.beta[i];
        // Float rounding of x (a few ulps of |x| <= ~15) over sigma (~3),
        // plus the LayerNorm's own few ulps of its O(1) output.
        ASSERT_NEAR(got.out[r * n + i], y, 2e-6) << "row " << r << " col " << i;
        ASSERT_NEAR(got.residual_out[r * n + i], x[i], 8 * kEps * 16) << r << " " << i;
      }
    }
    ExpectQuantizes(got.out.data(), 4, n, got.quantized);
  }
}

TEST(AddLayerNormInt8ReferenceTest, QuantizedScaleMayAliasSublayerScale) {
  const NormCase c = NormCase::Random(5, 200, true, 23);
  for (Isa isa : {Isa::kScalar, BestIsa()}) {
    const NormResult want = RunNorm(isa, c, true, true, false);
    const NormResult got = RunNorm(isa, c, true, true, false, /*alias=*/true);
    // Each row's input scale is read before its output scale is written.
    EXPECT_EQ(got.out, want.out);
    ExpectSameQuantization(got.quantized, want.quantized, 0);
  }
}

TEST(AddLayerNormInt8DispatchTest, AllThreadsMatchSingleThreadBestIsa) {
  const NormCase c = NormCase::Random(301, 768, true, 5);
  for (bool pre_ln : {false, true}) {
    const NormResult parallel = RunNorm(BestIsa(), c, pre_ln, true, true);
    const NormResult serial = RunNorm(BestIsa(), c, pre_ln, true, false);
    // Rows are independent and run by the same row kernel: bit-identical.
    EXPECT_EQ(parallel.out, serial.out);
    EXPECT_EQ(parallel.residual_out, serial.residual_out);
    EXPECT_EQ(parallel.quantized.q, serial.quantized.q);
  }
}

}  // namespace
}  // namespace engine::kernels::testing
