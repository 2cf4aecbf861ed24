// The attention kernels (scores, online softmax and context on a block of
// query rows and keys, Q, K, V read in place with a row stride, and the
// streaming loop over them) for every ISA against the formula in double
// precision and against the scalar kernels, and what they must leave
// untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/attention_kernels.h"

namespace engine::kernels::testing {
namespace {

constexpr float kSentinel = 12345.0f;
constexpr int64_t kBc = kAttentionKeyBlock;

// One head of one sequence inside a fused [length, stride] QKV buffer (Q at
// column `offset`, K and V `hidden` further) and a [length, out_stride]
// context buffer pre-filled with a sentinel; optionally a relative-position
// bias table exactly 2 * length - 1 wide (so ASan sees a stray read).
struct HeadProblem {
  HeadProblem(int64_t length, int64_t head_size, std::mt19937& rng, bool with_bias = false)
      : length(length), head_size(head_size) {
    hidden = 2 * head_size + 3;  // another head (plus a ragged gap) around this one
    offset = head_size + 1;
    stride = 3 * hidden + 5;
    qkv = Uniform(length * stride, -1.0f, 1.0f, rng);
    out_stride = hidden + 7;
    context.assign(static_cast<size_t>(length * out_stride), kSentinel);
    if (with_bias) bias = Uniform(2 * length - 1, -3.0f, 3.0f, rng);
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
    if (!bias.empty()) a.position_bias = bias.data() + (length - 1);
    return a;
  }

  double Q(int64_t r, int64_t c) const { return qkv[r * stride + offset + c]; }
  double K(int64_t r, int64_t c) const { return qkv[r * stride + offset + hidden + c]; }
  double V(int64_t r, int64_t c) const { return qkv[r * stride + offset + 2 * hidden + c]; }
  double Bias(int64_t r, int64_t j) const {
    return bias.empty() ? 0.0 : bias[static_cast<size_t>(j - r + length - 1)];
  }
  float Context(int64_t r, int64_t c) const { return context[r * out_stride + offset + c]; }

  int64_t length, head_size, hidden, offset, stride, out_stride;
  std::vector<float> qkv, context, bias;
};

// Row r's output written plainly in double: softmax over the whole row of
// scale * (q_r . k_j + bias[j - r]) for the keys r sees (r - before <= j <=
// r + after, a negative bound meaning none), then the weighted sum of V.
std::vector<double> ExpectedRow(const HeadProblem& p, int64_t r, double scale, KeyBand band) {
  const int64_t lo = band.before >= 0 ? std::max<int64_t>(0, r - band.before) : 0;
  const int64_t hi = band.after >= 0 ? std::min(p.length, r + band.after + 1) : p.length;
  std::vector<double> z(static_cast<size_t>(p.length), 0.0);  // 0 outside [lo, hi)
  double max = -INFINITY;
  for (int64_t j = lo; j < hi; ++j) {
    double dot = 0.0;
    for (int64_t c = 0; c < p.head_size; ++c) dot += p.Q(r, c) * p.K(j, c);
    z[j] = scale * (dot + p.Bias(r, j));
    max = std::max(max, z[j]);
  }
  double sum = 0.0;
  for (int64_t j = lo; j < hi; ++j) sum += (z[j] = std::exp(z[j] - max));
  std::vector<double> out(static_cast<size_t>(p.head_size), 0.0);
  for (int64_t j = lo; j < hi; ++j) {
    for (int64_t c = 0; c < p.head_size; ++c) out[c] += z[j] / sum * p.V(j, c);
  }
  return out;
}

void RunAttention(Isa isa, HeadProblem& p, int64_t row_begin, int64_t row_end, KeyBand band) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.head_size));
  std::vector<float> scratch(static_cast<size_t>(kAttentionScratchFloats + 1), kSentinel);
  AttentionWithIsa(isa, p.Args(), row_begin, row_end, scale, band, scratch.data());
  EXPECT_EQ(scratch.back(), kSentinel) << "scratch written past its end";
}

// The context rows [row_begin, row_end) of the head, in row order.
std::vector<float> HeadContext(const HeadProblem& p, int64_t row_begin, int64_t row_end) {
  std::vector<float> out;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t c = 0; c < p.head_size; ++c) out.push_back(p.Context(r, c));
  }
  return out;
}

// Runs AttentionWithIsa on rows [row_begin, row_end) and checks every
// output against the double formula (to `tolerance` absolute plus as much
// relative) and that nothing outside those rows' head columns or past the
// scratch was written. Returns the context of the rows for comparisons.
std::vector<float> ExpectAttention(Isa isa, HeadProblem& p, int64_t row_begin, int64_t row_end,
                                   KeyBand band, double tolerance = 2e-6) {
  std::fill(p.context.begin(), p.context.end(), kSentinel);
  RunAttention(isa, p, row_begin, row_end, band);
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.head_size));
  std::vector<float> got;
  for (int64_t r = 0; r < p.length; ++r) {
    const float* row = p.context.data() + r * p.out_stride;
    const bool inside = r >= row_begin && r < row_end;
    std::vector<double> want;
    if (inside) want = ExpectedRow(p, r, scale, band);
    for (int64_t c = 0; c < p.out_stride; ++c) {
      const bool ours = inside && c >= p.offset && c < p.offset + p.head_size;
      if (!ours) {
        if (row[c] != kSentinel) {
          ADD_FAILURE() << IsaName(isa) << " L " << p.length << " d " << p.head_size
                        << ": wrote outside its block at [" << r << "," << c << "]";
          return got;
        }
        continue;
      }
      const double w = want[c - p.offset];
      got.push_back(row[c]);
      if (!(std::fabs(row[c] - w) <= tolerance + tolerance * std::fabs(w))) {
        ADD_FAILURE() << IsaName(isa) << " L " << p.length << " d " << p.head_size << " band ["
                      << band.before << "," << band.after << "]" << (p.bias.empty() ? "" : " bias")
                      << " rows [" << row_begin << "," << row_end << ") at [" << r << ","
                      << c - p.offset << "]: got " << row[c] << ", want " << w;
        return got;
      }
    }
  }
  return got;
}

void ExpectAttention(Isa isa, int64_t length, int64_t head_size, int64_t row_begin, int64_t row_end,
                     std::mt19937& rng) {
  HeadProblem p(length, head_size, rng);
  ExpectAttention(isa, p, row_begin, row_end, KeyBand::All());
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
  for (int64_t d : {48, 64, 80, 96, 128, 256, 264, 300}) {
    ExpectAttention(GetParam(), 37, d, 0, 37, rng);
  }
  // Keys in more than one pass of the K^T pack (64 KiB: 64 keys of 256
  // floats with AVX-512's chunks, less than one key block).
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
  // More rows than one query block: split in equal blocks.
  ExpectAttention(GetParam(), 300, 32, 1, 290, rng);
}

// The streaming loop against the plain softmax over the whole row (double)
// and against the scalar kernels: sequences of one key block and of many,
// with and without the position bias, global and sliding windows.
// Tolerance 2e-6 absolute + 2e-6 relative, as for one block above: outputs
// are convex combinations of V in [-1, 1] (|output| mostly below 0.1); the
// float error comes from scores of up to 96 products (~1e-6 of an exponent
// of a few units), exp within 2 ulp, row sums of up to ~2,100 terms in float
// (rescaled once per key block) and 1 / l applied once. Observed: below
// 2e-7 at every ISA here, so 10x margin. A wrong mask, rescale or block
// boundary moves outputs by 1e-3 or more (one key of a 129-key window
// carries ~1 % of the weight); the tests fail on each such mutation.
constexpr double kStreamTolerance = 2e-6;

TEST_P(AttentionTest, StreamsOverKeyBlocks) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(21);
  for (int64_t d : {32, 64, 96}) {
    for (int64_t length : {int64_t{1}, int64_t{7}, kBc - 1, kBc, kBc + 1, 3 * kBc + 5}) {
      for (bool bias : {false, true}) {
        HeadProblem p(length, d, rng, bias);
        HeadProblem scalar = p;
        const std::vector<float> got =
            ExpectAttention(GetParam(), p, 0, length, KeyBand::All(), kStreamTolerance);
        if (GetParam() == Isa::kScalar) continue;
        RunAttention(Isa::kScalar, scalar, 0, length, KeyBand::All());
        const std::vector<float> want = HeadContext(scalar, 0, length);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], kStreamTolerance) << "vs scalar: L " << length << " d " << d;
        }
      }
    }
  }
}

// ~2,100 keys: 17 key blocks, on three blocks of query rows (the first,
// middle and last keys) so the double reference stays cheap.
TEST_P(AttentionTest, LongSequence) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(22);
  HeadProblem p(2100, 64, rng, /*with_bias=*/true);
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 40}, {1000, 1061}, {2070, 2100}}) {
    ExpectAttention(GetParam(), p, begin, end, KeyBand::All(), kStreamTolerance);
  }
}

// Sliding windows: query i sees key j iff |i - j| <= w, on lengths far
// beyond the window, with rows blocks that start anywhere.
TEST_P(AttentionTest, SlidingWindow) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(23);
  for (int64_t window : {1, 16, 64}) {
    for (int64_t length : {int64_t{1}, int64_t{7}, kBc + 1, 3 * kBc + 5, int64_t{1100}}) {
      for (bool bias : {false, true}) {
        HeadProblem p(length, 64, rng, bias);
        ExpectAttention(GetParam(), p, 0, length, KeyBand::Window(window), kStreamTolerance);
      }
    }
    HeadProblem p(700, 32, rng);
    ExpectAttention(GetParam(), p, 333, 517, KeyBand::Window(window), kStreamTolerance);
  }
  // A window reaching every key is global attention.
  HeadProblem p(50, 32, rng);
  ExpectAttention(GetParam(), p, 0, 50, KeyBand::Window(49), kStreamTolerance);
}

// Causal attention (decoder embedders): query i sees keys j <= i, alone and
// within a causal window (i - w <= j <= i), over several key and query
// blocks, with rows blocks that start anywhere.
TEST_P(AttentionTest, CausalAndCausalWindow) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(25);
  for (KeyBand band : {KeyBand{-1, 0}, KeyBand{16, 0}, KeyBand{200, 0}}) {
    for (int64_t length : {int64_t{1}, int64_t{7}, kBc + 1, 3 * kBc + 5}) {
      HeadProblem p(length, 64, rng, /*with_bias=*/false);
      ExpectAttention(GetParam(), p, 0, length, band, kStreamTolerance);
    }
    HeadProblem p(700, 32, rng);
    ExpectAttention(GetParam(), p, 333, 517, band, kStreamTolerance);
  }
}

TEST_P(AttentionTest, SlidingWindowMatchesScalar) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  if (GetParam() == Isa::kScalar) GTEST_SKIP() << "the reference itself";
  std::mt19937 rng(24);
  for (int64_t d : {32, 96}) {
    HeadProblem p(3 * kBc + 5, d, rng, /*with_bias=*/true);
    HeadProblem scalar = p;
    const std::vector<float> got =
        ExpectAttention(GetParam(), p, 0, p.length, KeyBand::Window(64), kStreamTolerance);
    RunAttention(Isa::kScalar, scalar, 0, p.length, KeyBand::Window(64));
    const std::vector<float> want = HeadContext(scalar, 0, p.length);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], kStreamTolerance) << i;
  }
}

TEST_P(AttentionTest, ScoresAreDotProducts) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(14);
  for (int64_t d : {8, 13, 64}) {
    HeadProblem p(45, d, rng);
    std::vector<float> scores(static_cast<size_t>(40 * 45));
    AttentionScoresWithIsa(GetParam(), p.Args(), 5, 45, 0, 45, scores.data(), 45);
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

// A key range [key_begin, key_end) into a block with a wider row stride:
// every other float of the block stays untouched.
TEST_P(AttentionTest, ScoresOfAKeyRange) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(17);
  for (auto [key_begin, key_end] : {std::pair<int64_t, int64_t>{0, 1}, {3, 40}, {17, 99}}) {
    HeadProblem p(99, 24, rng, /*with_bias=*/true);
    const int64_t stride = key_end - key_begin + 5;
    std::vector<float> scores(static_cast<size_t>(20 * stride), kSentinel);
    AttentionScoresWithIsa(GetParam(), p.Args(), 70, 90, key_begin, key_end, scores.data(), stride);
    for (int64_t r = 70; r < 90; ++r) {
      for (int64_t col = 0; col < stride; ++col) {
        const float got = scores[(r - 70) * stride + col];
        const int64_t j = key_begin + col;
        if (j >= key_end) {
          ASSERT_EQ(got, kSentinel) << "[" << r << "," << col << "]";
          continue;
        }
        double dot = p.Bias(r, j);
        for (int64_t c = 0; c < p.head_size; ++c) dot += p.Q(r, c) * p.K(j, c);
        ASSERT_NEAR(got, dot, 1e-5) << IsaName(GetParam()) << " [" << r << "," << j << "]";
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
    HeadProblem p(length, d, rng, /*with_bias=*/true);
    std::vector<float> scores(static_cast<size_t>((length - begin) * length));
    AttentionScoresWithIsa(GetParam(), p.Args(), begin, length, 0, length, scores.data(), length);
    for (int64_t r = begin; r < length; ++r) {
      for (int64_t j = 0; j < length; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < d; ++c) dot += p.Q(r, c) * p.K(j, c);
        const double want = dot + p.Bias(r, j);
        ASSERT_NEAR(scores[(r - begin) * length + j], want, 1e-5)
            << IsaName(GetParam()) << " L " << length << " d " << d << " [" << r << "," << j << "]";
      }
    }
  }
}

// The online softmax of a block against the formula: a row's valid columns
// are the band [band_begin + r, band_end + r) within [0, cols), the others
// become 0; m, l and the rescale factor follow the running state given.
TEST_P(AttentionTest, OnlineSoftmaxOfABlock) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(18);
  const float scale = 0.125f;
  for (int64_t cols : {1, 5, 16, 17, 33, 128}) {
    for (auto [band_begin, band_end] : {std::pair<int64_t, int64_t>{-1000, 1000},
                                        {-3, 4},
                                        {2, 3},
                                        {cols - 2, cols + 40},
                                        {-40, -2}}) {
      const int64_t rows = 9, stride = cols + 3;
      std::vector<float> s = Uniform(rows * stride, -30.0f, 30.0f, rng);
      const std::vector<float> in = s;
      // Rows 0-2 start fresh; the others carry a state whose max is below,
      // near or above this block's.
      std::vector<float> m(rows), l(rows), rescale(rows, kSentinel);
      for (int64_t r = 0; r < rows; ++r) {
        m[r] = r < 3 ? -std::numeric_limits<float>::infinity() : static_cast<float>(r - 5);
        l[r] = r < 3 ? 0.0f : 1.5f;
      }
      const std::vector<float> m0 = m, l0 = l;
      OnlineSoftmaxWithIsa(GetParam(), s.data(), rows, cols, stride, scale, band_begin, band_end,
                           m.data(), l.data(), rescale.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t lo = std::clamp<int64_t>(band_begin + r, 0, cols);
        const int64_t hi = std::clamp<int64_t>(band_end + r, lo, cols);
        const std::string at = std::string(IsaName(GetParam())) + " cols " + std::to_string(cols) +
                               " band " + std::to_string(band_begin) + " row " + std::to_string(r);
        for (int64_t c = cols; c < stride; ++c) {
          ASSERT_EQ(s[r * stride + c], in[r * stride + c]) << at << ": wrote past cols";
        }
        double max = m0[r];
        for (int64_t c = lo; c < hi; ++c) max = std::max(max, double{scale} * in[r * stride + c]);
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
          const bool valid = c >= lo && c < hi;
          const double want = valid ? std::exp(double{scale} * in[r * stride + c] - max) : 0.0;
          sum += want;
          ASSERT_NEAR(s[r * stride + c], want, 1e-6 + 1e-6 * want) << at << " col " << c;
        }
        if (lo == hi) {
          EXPECT_EQ(rescale[r], 1.0f) << at;
          EXPECT_EQ(m[r], m0[r]) << at;
          EXPECT_EQ(l[r], l0[r]) << at;
          continue;
        }
        const double alpha = std::exp(m0[r] - max);
        EXPECT_NEAR(rescale[r], alpha, 1e-6 * alpha) << at;
        EXPECT_NEAR(m[r], max, 1e-6 * std::fabs(max)) << at;
        const double want_l = l0[r] * alpha + sum;
        EXPECT_NEAR(l[r], want_l, 1e-6 * want_l) << at;
      }
    }
  }
}

// The context kernel's modes: overwrite, accumulate with a per-row keep
// factor, and a per-row finish factor, over a key range of a wider block.
TEST_P(AttentionTest, ContextAccumulatesAndScalesRows) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  std::mt19937 rng(19);
  for (int64_t d : {7, 64, 96}) {
    HeadProblem p(80, d, rng);
    const int64_t key_begin = 11, key_end = 70, stride = 64, rows = 13, row_begin = 50;
    const std::vector<float> probs = Uniform(rows * stride, 0.0f, 1.0f, rng);
    const std::vector<float> keep = Uniform(rows, 0.0f, 1.0f, rng);
    const std::vector<float> finish = Uniform(rows, 0.5f, 2.0f, rng);
    for (int mode = 0; mode < 3; ++mode) {
      const std::vector<float> before = Uniform(80 * p.out_stride, -1.0f, 1.0f, rng);
      p.context = before;
      ContextScale scale;
      if (mode >= 1) scale.keep = keep.data();
      if (mode == 2) scale.finish = finish.data();
      AttentionContextWithIsa(GetParam(), p.Args(), row_begin, row_begin + rows, key_begin, key_end,
                              probs.data(), stride, scale);
      for (int64_t r = 0; r < 80; ++r) {
        for (int64_t c = 0; c < p.out_stride; ++c) {
          const size_t at = static_cast<size_t>(r * p.out_stride + c);
          const bool ours =
              r >= row_begin && r < row_begin + rows && c >= p.offset && c < p.offset + d;
          if (!ours) {
            ASSERT_EQ(p.context[at], before[at]) << "[" << r << "," << c << "]";
            continue;
          }
          const int64_t i = r - row_begin;
          double want = mode >= 1 ? double{keep[i]} * before[at] : 0.0;
          for (int64_t j = key_begin; j < key_end; ++j) {
            want += double{probs[i * stride + j - key_begin]} * p.V(j, c - p.offset);
          }
          if (mode == 2) want *= finish[i];
          ASSERT_NEAR(p.context[at], want, 1e-5 + 1e-6 * std::fabs(want))
              << IsaName(GetParam()) << " mode " << mode << " d " << d << " [" << r << ","
              << c - p.offset << "]";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AttentionTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512), IsaParamName);

TEST(AttentionDispatchTest, BestIsaMatchesScalar) {
  std::mt19937 rng(15);
  HeadProblem a(300, 64, rng);
  HeadProblem b = a;
  std::vector<float> scratch(static_cast<size_t>(kAttentionScratchFloats));
  AttentionWithIsa(BestIsa(), a.Args(), 0, 300, 0.125f, KeyBand::All(), scratch.data());
  AttentionWithIsa(Isa::kScalar, b.Args(), 0, 300, 0.125f, KeyBand::All(), scratch.data());
  for (size_t i = 0; i < a.context.size(); ++i) {
    ASSERT_NEAR(a.context[i], b.context[i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace engine::kernels::testing
