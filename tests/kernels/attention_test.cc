// The attention kernels (scores, softmax, context on a block of query rows,
// Q, K, V read in place with a row stride) for every ISA against the
// formula in double precision, and what they must leave untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/attention_kernels.h"

namespace engine::kernels::testing {
namespace {

constexpr float kSentinel = 12345.0f;

// One head of one sequence inside a fused [length, stride] QKV buffer (Q at
// column `offset`, K and V `hidden` further) and a [length, out_stride]
// context buffer pre-filled with a sentinel.
struct HeadProblem {
  HeadProblem(int64_t length, int64_t head_size, std::mt19937& rng)
      : length(length), head_size(head_size) {
    hidden = 2 * head_size + 3;  // another head (plus a ragged gap) around this one
    offset = head_size + 1;
    stride = 3 * hidden + 5;
    qkv = Uniform(length * stride, -1.0f, 1.0f, rng);
    out_stride = hidden + 7;
    context.assign(static_cast<size_t>(length * out_stride), kSentinel);
  }

  AttentionHeadArgs Args() {
    AttentionHeadArgs a;
    a.q = qkv.data() + offset;
    a.k = a.q + hidden;
    a.v = a.q + 2 * hidden;
    a.qkv_stride = stride;
    a.length = length;
    a.head_size = head_size;
    a.context = context.data() + offset;
    a.context_stride = out_stride;
    return a;
  }

  double Q(int64_t r, int64_t c) const { return qkv[r * stride + offset + c]; }
  double K(int64_t r, int64_t c) const { return qkv[r * stride + offset + hidden + c]; }
  double V(int64_t r, int64_t c) const { return qkv[r * stride + offset + 2 * hidden + c]; }

  int64_t length, head_size, hidden, offset, stride, out_stride;
  std::vector<float> qkv, context;
};

// softmax(scale * q_r K^T) V in double.
std::vector<double> ExpectedRow(const HeadProblem& p, int64_t r, double scale) {
  std::vector<double> z(static_cast<size_t>(p.length));
  double max = -INFINITY;
  for (int64_t j = 0; j < p.length; ++j) {
    double dot = 0.0;
    for (int64_t c = 0; c < p.head_size; ++c) dot += p.Q(r, c) * p.K(j, c);
    z[j] = scale * dot;
    max = std::max(max, z[j]);
  }
  double sum = 0.0;
  for (double& e : z) sum += (e = std::exp(e - max));
  std::vector<double> out(static_cast<size_t>(p.head_size), 0.0);
  for (int64_t j = 0; j < p.length; ++j) {
    for (int64_t c = 0; c < p.head_size; ++c) out[c] += z[j] / sum * p.V(j, c);
  }
  return out;
}

void ExpectAttention(Isa isa, int64_t length, int64_t head_size, int64_t row_begin, int64_t row_end,
                     std::mt19937& rng) {
  HeadProblem p(length, head_size, rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  std::vector<float> scores(static_cast<size_t>((row_end - row_begin) * length + 1), kSentinel);
  AttentionRowsWithIsa(isa, p.Args(), row_begin, row_end, scale, scores.data());
  // The scores block holds exactly (rows x length) floats.
  ASSERT_EQ(scores.back(), kSentinel) << "scores written past the block";
  for (int64_t r = 0; r < length; ++r) {
    const float* row = p.context.data() + r * p.out_stride;
    const bool inside = r >= row_begin && r < row_end;
    std::vector<double> want;
    if (inside) want = ExpectedRow(p, r, scale);
    for (int64_t c = 0; c < p.out_stride; ++c) {
      const bool ours = inside && c >= p.offset && c < p.offset + head_size;
      if (!ours) {
        ASSERT_EQ(row[c], kSentinel) << IsaName(isa) << " L " << length << " d " << head_size
                                     << ": wrote outside its block at [" << r << "," << c << "]";
        continue;
      }
      const double w = want[c - p.offset];
      ASSERT_NEAR(row[c], w, 2e-6 + 2e-6 * std::fabs(w))
          << IsaName(isa) << " L " << length << " d " << head_size << " rows [" << row_begin << ","
          << row_end << ") at [" << r << "," << c - p.offset << "]";
    }
  }
}

class AttentionTest : public ::testing::TestWithParam<Isa> {};

TEST_P(AttentionTest, EveryLengthAllRows) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(11);
  for (int64_t length = 1; length <= 70; ++length) {
    ExpectAttention(GetParam(), length, 64, 0, length, rng);
  }
  for (int64_t length : {127, 128, 129, 200})
    ExpectAttention(GetParam(), length, 64, 0, length, rng);
}

TEST_P(AttentionTest, HeadSizes) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(12);
  // Every tail of both vector widths, model sizes, and past the packed
  // kernels' limit (256: scalar fallback).
  for (int64_t d = 1; d <= 40; ++d) ExpectAttention(GetParam(), 23, d, 0, 23, rng);
  for (int64_t d : {48, 64, 80, 96, 128, 256, 264}) ExpectAttention(GetParam(), 37, d, 0, 37, rng);
  // Keys in more than one pass of the K^T pack (64 KiB: 256 keys of 64
  // floats, 64 keys of 256 with AVX2's chunks).
  ExpectAttention(GetParam(), 300, 64, 0, 300, rng);
  ExpectAttention(GetParam(), 150, 256, 140, 150, rng);
}

TEST_P(AttentionTest, BlocksOfQueryRows) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(13);
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 1},
                            {5, 6},
                            {3, 10},
                            {16, 32},
                            {7, 60},
                            {59, 61},
                            {45, 61}}) {
    ExpectAttention(GetParam(), 61, 64, begin, end, rng);
    ExpectAttention(GetParam(), 61, 24, begin, end, rng);
  }
}

TEST_P(AttentionTest, ScoresAreDotProducts) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(14);
  for (int64_t d : {8, 13, 64}) {
    HeadProblem p(45, d, rng);
    std::vector<float> scores(static_cast<size_t>(40 * 45));
    AttentionScoresWithIsa(GetParam(), p.Args(), 5, 45, scores.data());
    for (int64_t r = 5; r < 45; ++r) {
      for (int64_t j = 0; j < 45; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < d; ++c) dot += p.Q(r, c) * p.K(j, c);
        ASSERT_NEAR(scores[(r - 5) * 45 + j], dot, 1e-5)
            << "d " << d << " [" << r << "," << j << "]";
      }
    }
  }
}

// MPNet's relative-position bias is added inside the scores kernel:
// score(r, j) = q_r . k_j + bias[j - r], for every tile shape and ragged
// edge (lengths past both vector widths, blocks of rows, several K passes),
// and nothing is read outside [-(L - 1), L - 1] (the table here is exactly
// that wide, so ASan would see a stray load).
TEST_P(AttentionTest, ScoresAddThePositionBiasByDistance) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(16);
  for (auto [length, d, begin] : {std::tuple<int64_t, int64_t, int64_t>{1, 16, 0},
                                  {7, 16, 0},
                                  {33, 12, 3},
                                  {61, 64, 17},
                                  {129, 16, 0},
                                  {300, 64, 250}}) {
    HeadProblem p(length, d, rng);
    const std::vector<float> table = Uniform(2 * length - 1, -3.0f, 3.0f, rng);
    AttentionHeadArgs args = p.Args();
    args.position_bias = table.data() + (length - 1);
    std::vector<float> scores(static_cast<size_t>((length - begin) * length));
    AttentionScoresWithIsa(GetParam(), args, begin, length, scores.data());
    for (int64_t r = begin; r < length; ++r) {
      for (int64_t j = 0; j < length; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < d; ++c) dot += p.Q(r, c) * p.K(j, c);
        const double want = dot + table[static_cast<size_t>(j - r + length - 1)];
        ASSERT_NEAR(scores[(r - begin) * length + j], want, 1e-5)
            << IsaName(GetParam()) << " L " << length << " d " << d << " [" << r << "," << j << "]";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AttentionTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512), IsaParamName);

TEST(AttentionDispatchTest, BestIsaMatchesScalar) {
  std::mt19937 rng(15);
  HeadProblem a(128, 64, rng);
  HeadProblem b = a;
  std::vector<float> scores(128 * 128);
  AttentionRowsWithIsa(BestIsa(), a.Args(), 0, 128, 0.125f, scores.data());
  AttentionRowsWithIsa(Isa::kScalar, b.Args(), 0, 128, 0.125f, scores.data());
  for (size_t i = 0; i < a.context.size(); ++i) {
    ASSERT_NEAR(a.context[i], b.context[i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace engine::kernels::testing
