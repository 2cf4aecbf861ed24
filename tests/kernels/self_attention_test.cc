// SelfAttention over a packed batch of sequences of different lengths (one
// past 1,000 tokens: many key blocks) against per-sequence attention
// written plainly in double, at every kernel ISA the CPU has (BestIsa
// capped), global and sliding-window, with MPNet's relative-position bias,
// with rotary positions (against attention on Q and K turned beforehand by
// the formula, in double), with the query rows of few (sequence, head)
// pairs split across tasks, and as decoder embedders run it: grouped-query
// heads, a scale of their own, causal and causal-window masks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/attention_kernels.h"
#include "layers/attention.h"
#include "layers/rotary.h"
#include "layers/workspace.h"

namespace engine {
namespace {

using kernels::Isa;

// Q | K | V of a packed batch: `heads` query heads, `kv_heads` K and V
// heads (0: heads), query head h reading K/V head h / (heads / kv_heads).
struct Batch {
  Batch(const std::vector<int>& lengths, int heads, int head_size, std::mt19937& rng,
        int kv_heads = 0)
      : heads(heads), kv_heads(kv_heads > 0 ? kv_heads : heads), head_size(head_size) {
    offsets.push_back(0);
    for (int n : lengths) offsets.push_back(offsets.back() + n);
    packed.offsets = offsets.data();
    packed.num_sequences = static_cast<int>(lengths.size());
    packed.tokens = offsets.back();
    qkv = kernels::testing::Uniform(packed.tokens * stride(), -1.0f, 1.0f, rng);
  }
  // The context's width (query heads).
  int64_t hidden() const { return static_cast<int64_t>(heads) * head_size; }
  int64_t kv_width() const { return static_cast<int64_t>(kv_heads) * head_size; }
  int64_t stride() const { return hidden() + 2 * kv_width(); }
  // Where part 0 (Q), 1 (K) or 2 (V) of head `head` of that part starts in a row.
  int64_t Column(int part, int head) const {
    return (part == 0 ? 0 : hidden() + (part - 1) * kv_width()) +
           static_cast<int64_t>(head) * head_size;
  }

  // Token t's (global row) element c of query head h's Q (part 0), K (1) or V (2).
  double At(int part, int64_t t, int h, int c) const {
    const int head = part == 0 ? h : h / (heads / kv_heads);
    return qkv[t * stride() + Column(part, head) + c];
  }

  int heads, kv_heads, head_size;
  std::vector<int> offsets;
  PackedBatch packed;
  std::vector<float> qkv;
};

// Relative-position bias values for distances up to max_offset, per head.
RelativePositionBias RandomBias(int heads, int64_t max_offset, std::mt19937& rng) {
  RelativePositionBias bias;
  bias.max_offset = max_offset;
  bias.table = kernels::testing::Uniform(heads * (2 * max_offset + 1), -2.0f, 2.0f, rng);
  return bias;
}

// Whether query i sees key j under `band` (a negative bound: none).
bool Sees(kernels::KeyBand band, int64_t i, int64_t j) {
  return (band.before < 0 || j >= i - band.before) && (band.after < 0 || j <= i + band.after);
}

// Every sequence, head and row in double: softmax over the keys of its own
// sequence within the band of scale * (q . k + bias), times V.
std::vector<double> NaiveAttention(const Batch& b, const RelativePositionBias& bias,
                                   kernels::KeyBand band, double scale) {
  std::vector<double> out(static_cast<size_t>(b.packed.tokens * b.hidden()), 0.0);
  for (int s = 0; s < b.packed.num_sequences; ++s) {
    const int64_t begin = b.offsets[s], len = b.offsets[s + 1] - begin;
    for (int h = 0; h < b.heads; ++h) {
      for (int64_t i = 0; i < len; ++i) {
        std::vector<double> p(static_cast<size_t>(len), 0.0);
        double max = -INFINITY;
        for (int64_t j = 0; j < len; ++j) {
          if (!Sees(band, i, j)) continue;
          double dot = bias.empty() ? 0.0 : bias.ForHead(h)[j - i];
          for (int c = 0; c < b.head_size; ++c) {
            dot += b.At(0, begin + i, h, c) * b.At(1, begin + j, h, c);
          }
          p[j] = scale * dot;
          max = std::max(max, p[j]);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          const bool seen = Sees(band, i, j);
          p[j] = seen ? std::exp(p[j] - max) : 0.0;
          sum += p[j];
        }
        double* row = out.data() + (begin + i) * b.hidden() + h * b.head_size;
        for (int64_t j = 0; j < len; ++j) {
          if (p[j] == 0.0) continue;
          for (int c = 0; c < b.head_size; ++c) row[c] += p[j] / sum * b.At(2, begin + j, h, c);
        }
      }
    }
  }
  return out;
}

std::vector<float> RunSelfAttention(const Batch& b, const RelativePositionBias& bias,
                                    kernels::KeyBand band, float scale, const RotaryTable* rotary) {
  Workspace ws;
  ws.threads = 2;
  ws.attention_scratch_floats = kernels::AttentionScratchFloats(b.head_size, rotary != nullptr);
  absl::StatusOr<Buffer> scratch = Buffer::Allocate(ws.threads * ws.attention_scratch_floats);
  EXPECT_TRUE(scratch.ok());
  ws.scores = *std::move(scratch);
  std::vector<float> context(static_cast<size_t>(b.packed.tokens * b.hidden()), NAN);
  SelfAttention(b.qkv.data(), b.packed, AttentionShape{b.heads, b.kv_heads, b.head_size, scale},
                bias, rotary, band, ws, context.data());
  return context;
}

// `b` with every token's Q and K heads turned by its position in its
// sequence, by the RoPE formula in double: pair i (i, i + dims / 2, or 2i,
// 2i + 1 interleaved) by position / base^(2i / dims).
Batch Rotated(const Batch& b, const RotaryConfig& rotary) {
  Batch out = b;
  out.packed.offsets = out.offsets.data();
  const int dims = rotary.dims > 0 ? rotary.dims : b.head_size;
  for (int s = 0; s < b.packed.num_sequences; ++s) {
    for (int64_t t = b.offsets[s]; t < b.offsets[s + 1]; ++t) {
      const double position = static_cast<double>(t - b.offsets[s]);
      for (int part = 0; part < 2; ++part) {
        for (int h = 0; h < (part == 0 ? b.heads : b.kv_heads); ++h) {
          float* row = out.qkv.data() + t * b.stride() + b.Column(part, h);
          const float* in = b.qkv.data() + t * b.stride() + b.Column(part, h);
          for (int i = 0; i < dims / 2; ++i) {
            const double angle =
                position / std::pow(static_cast<double>(rotary.base), 2.0 * i / dims);
            const int x = rotary.interleaved ? 2 * i : i;
            const int y = rotary.interleaved ? 2 * i + 1 : i + dims / 2;
            const double x1 = in[x], x2 = in[y];
            row[x] = static_cast<float>(x1 * std::cos(angle) - x2 * std::sin(angle));
            row[y] = static_cast<float>(x2 * std::cos(angle) + x1 * std::sin(angle));
          }
        }
      }
    }
  }
  return out;
}

// Absolute tolerance: outputs are convex combinations of V in [-1, 1]; the
// float kernels' error over ~1,100 keys is below 2e-7 (attention_test.cc
// explains the budget), while one key of a window mis-masked or a block
// mis-scaled moves outputs by 1e-3 or more.
constexpr double kTolerance = 2e-6;

// SelfAttention at every kernel ISA this CPU has (BestIsa capped) against
// the double reference, computed once.
void ExpectEveryIsaMatches(const Batch& b, const RelativePositionBias& bias, kernels::KeyBand band,
                           const RotaryConfig* rotary = nullptr, float scale = 0) {
  const double want_scale = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(b.head_size));
  const std::vector<double> want =
      NaiveAttention(rotary != nullptr ? Rotated(b, *rotary) : b, bias, band, want_scale);
  const int64_t longest = 1100;
  const RotaryTable table = rotary != nullptr
                                ? MakeRotaryTable(*rotary, rotary->base, b.head_size, longest)
                                : RotaryTable();
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!kernels::IsaSupported(isa)) continue;
    kernels::CapIsa(isa);
    const std::vector<float> got =
        RunSelfAttention(b, bias, band, scale, rotary != nullptr ? &table : nullptr);
    kernels::CapIsa(Isa::kAvx512);
    for (size_t i = 0; i < want.size(); ++i) {
      // Also fails on NaN: every context value must have been written.
      ASSERT_TRUE(std::fabs(got[i] - want[i]) <= kTolerance)
          << kernels::IsaName(isa) << " band [" << band.before << "," << band.after << "] token "
          << i / b.hidden() << " column " << i % b.hidden() << ": got " << got[i] << ", want "
          << want[i];
    }
  }
}

TEST(SelfAttentionTest, PackedBatchEqualsPerSequenceAttention) {
  std::mt19937 rng(31);
  const Batch b({1, 37, 129, 1100, 300}, 2, 32, rng);
  ExpectEveryIsaMatches(b, RandomBias(2, 1099, rng), kernels::KeyBand::All());
}

TEST(SelfAttentionTest, SlidingWindowPerSequence) {
  std::mt19937 rng(32);
  const Batch b({5, 200, 1100, 64}, 3, 64, rng);
  for (int window : {1, 16, 64}) {
    ExpectEveryIsaMatches(b, RelativePositionBias(), kernels::KeyBand::Window(window));
  }
}

// Rotary positions turned inside the kernel, block by block: every key
// block of the 1,100-token sequence and a query block starting mid-sequence
// (windowed) must use each row's own position.
TEST(SelfAttentionTest, RotaryPositionsPerSequence) {
  std::mt19937 rng(34);
  const Batch b({3, 1100, 130}, 2, 32, rng);
  for (const RotaryConfig& rotary :
       {RotaryConfig{10000, 0, false, 0}, RotaryConfig{1000, 16, true, 0}}) {
    ExpectEveryIsaMatches(b, RelativePositionBias(), kernels::KeyBand::All(), &rotary);
    ExpectEveryIsaMatches(b, RelativePositionBias(), kernels::KeyBand::Window(64), &rotary);
  }
}

// One sequence and one head: fewer pairs than tasks for the threads, so
// the pair's query rows are split into blocks.
TEST(SelfAttentionTest, FewPairsSplitByQueryRows) {
  std::mt19937 rng(33);
  const Batch b({300}, 1, 96, rng);
  ExpectEveryIsaMatches(b, RelativePositionBias(), kernels::KeyBand::All());
  ExpectEveryIsaMatches(b, RelativePositionBias(), kernels::KeyBand::Window(16));
}

// Qwen3 / Gemma 3 attention: 4 query heads on 2 K/V heads (each K/V head
// serves query heads 2k and 2k + 1), a scale other than 1 / sqrt(d), rotary
// positions, and causal masks with and without a window.
TEST(SelfAttentionTest, GroupedQueryCausalAttention) {
  std::mt19937 rng(35);
  const Batch b({1, 9, 300, 130}, 4, 32, rng, /*kv_heads=*/2);
  const RotaryConfig rotary{1000000, 0, false, 0};
  for (kernels::KeyBand band :
       {kernels::KeyBand::All(), kernels::KeyBand{-1, 0}, kernels::KeyBand{16, 0}}) {
    ExpectEveryIsaMatches(b, RelativePositionBias(), band, &rotary, 0.15f);
  }
  // One K/V head for all query heads (EmbeddingGemma), sliding window.
  const Batch one({40, 7}, 3, 48, rng, /*kv_heads=*/1);
  ExpectEveryIsaMatches(one, RelativePositionBias(), kernels::KeyBand::Window(8), &rotary);
}

}  // namespace
}  // namespace engine
