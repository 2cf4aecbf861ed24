// Rotary positions (tables, and the row rotation the attention kernel
// applies as it reads Q and K) and ALiBi slopes against their definitions
// written out here in double precision. The family fixtures (tests/golden/
// make_long_context.py) check them end to end; these pin each rule on its
// own, at positions far beyond the fixtures' 300 tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/attention_kernels.h"
#include "layers/alibi.h"
#include "layers/rotary.h"

namespace engine {
namespace {

// inv_freq(i) = 1 / base^(2i / dims), GTE's NTK: base * f, then / f^(2 / dims).
double InverseFrequency(double base, int i, int dims, double ntk) {
  const double theta = ntk > 0 ? base * ntk : base;
  const double inv = 1.0 / std::pow(theta, 2.0 * i / dims);
  return ntk > 0 ? inv / std::pow(ntk, 2.0 / dims) : inv;
}

TEST(RotaryTableTest, AnglesAreThePositionTimesTheInverseFrequency) {
  for (const RotaryConfig& rotary :
       {RotaryConfig{10000, 0, false, 0}, RotaryConfig{500000, 0, false, 2.0f},
        RotaryConfig{1000, 16, true, 0}}) {
    const int head = 32;
    const RotaryTable table = MakeRotaryTable(rotary, rotary.base, head, 8192);
    const int dims = rotary.dims > 0 ? rotary.dims : head;
    ASSERT_EQ(table.pairs, dims / 2);
    for (int64_t p : {0, 1, 300, 8191}) {
      for (int i = 0; i < table.pairs; ++i) {
        const double angle = p * InverseFrequency(rotary.base, i, dims, rotary.ntk_factor);
        // float32 rounding of cos / sin only: the angle itself is exact in
        // double (a float32 angle would be off by ~5e-4 at 8191).
        EXPECT_NEAR(table.cos[p * table.pairs + i], std::cos(angle), 1e-7) << p << " " << i;
        EXPECT_NEAR(table.sin[p * table.pairs + i], std::sin(angle), 1e-7) << p << " " << i;
      }
    }
  }
}

// Rotates x as the reference implementations do: rotate_half pairs (i,
// i + dims / 2), interleaved pairs (2i, 2i + 1); dims past the rotated
// share stay.
std::vector<double> Rotate(const std::vector<double>& x, int64_t position,
                           const RotaryConfig& rotary, int head) {
  const int dims = rotary.dims > 0 ? rotary.dims : head;
  std::vector<double> out = x;
  for (int i = 0; i < dims / 2; ++i) {
    const double angle = position * InverseFrequency(rotary.base, i, dims, rotary.ntk_factor);
    const int a = rotary.interleaved ? 2 * i : i;
    const int b = rotary.interleaved ? 2 * i + 1 : i + dims / 2;
    out[a] = x[a] * std::cos(angle) - x[b] * std::sin(angle);
    out[b] = x[b] * std::cos(angle) + x[a] * std::sin(angle);
  }
  return out;
}

TEST(RotateRowsTest, TurnsEachRowByItsPosition) {
  const int head = 8;
  for (const RotaryConfig& rotary :
       {RotaryConfig{10000, 0, false, 0}, RotaryConfig{100, 4, true, 0}}) {
    const RotaryTable table = MakeRotaryTable(rotary, rotary.base, head, 16);
    const kernels::RotaryView view{table.cos.data(), table.sin.data(), table.pairs,
                                   table.interleaved};
    const int64_t stride = 3 * head;  // rows of a fused projection
    std::vector<float> x(16 * stride);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i) + 0.1f;
    std::vector<float> out((12 - 5) * head);
    kernels::RotateRows(view, x.data(), stride, 5, 12, head, out.data());
    for (int64_t r = 5; r < 12; ++r) {
      const std::vector<double> row(x.begin() + r * stride, x.begin() + r * stride + head);
      const std::vector<double> want = Rotate(row, r, rotary, head);
      for (int c = 0; c < head; ++c) {
        EXPECT_NEAR(out[(r - 5) * head + c], want[c], 1e-6) << "row " << r << " dim " << c;
      }
    }
  }
}

TEST(AlibiTest, SlopesAreTheGeometricSeriesOfThePaper) {
  // Power of two: 2^(-8 (h + 1) / n).
  const std::vector<float> eight = AlibiSlopes(8);
  for (int h = 0; h < 8; ++h) EXPECT_FLOAT_EQ(eight[h], std::pow(2.0, -(h + 1.0))) << h;
  // Otherwise the nearest lower power of two's, then every other slope of
  // the next power of two's: 6 heads = 4's (1/4 .. 1/256), then 8's 1/2, 1/8.
  const std::vector<float> six = AlibiSlopes(6);
  const double want[] = {0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256, 0.5, 0.125};
  ASSERT_EQ(six.size(), 6u);
  for (int h = 0; h < 6; ++h) EXPECT_FLOAT_EQ(six[h], want[h]) << h;
  // jina-embeddings-v2-base's 12 heads: 8's, then 16's 1st, 3rd, 5th, 7th.
  const std::vector<float> twelve = AlibiSlopes(12);
  for (int h = 0; h < 8; ++h) EXPECT_FLOAT_EQ(twelve[h], std::pow(2.0, -(h + 1.0))) << h;
  for (int h = 8; h < 12; ++h) {
    EXPECT_FLOAT_EQ(twelve[h], std::pow(2.0, -0.5 * (2 * (h - 8) + 1))) << h;
  }
}

TEST(AlibiTest, BiasIsMinusSlopeTimesDistanceOverTheScale) {
  const float scale = 0.125f;
  const RelativePositionBias bias = MakeAlibiBias(6, 9000, scale);
  const std::vector<float> slopes = AlibiSlopes(6);
  for (int h = 0; h < 6; ++h) {
    for (int64_t d : {-8999, -5, 0, 1, 8999}) {
      EXPECT_FLOAT_EQ(bias.ForHead(h)[d], -slopes[h] * std::abs(d) / scale) << h << " " << d;
    }
  }
}

}  // namespace
}  // namespace engine
