// The int8 path: oneDNN's integer matmul against exact integer arithmetic,
// and the int8 encoder against the float32 one (itself checked against
// PyTorch in parity_test), on the golden fixtures and a MiniLM-shaped model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dnnl/dense.h"
#include "dnnl/quantized_dense.h"
#include "engine/encoder.h"
#include "engine/isa.h"
#include "nlohmann/json.hpp"
#include "precision_compare.h"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

using testing::ComparePooled;
using testing::Cosine;
using testing::CosineStats;
using testing::GoldenBatch;
using testing::MiniLmSpec;
using testing::PrintStats;
using testing::RandomSequences;

// ---- oneDNN's u8 x s8 -> s32 matmul, through QuantizedDense ----

struct IntCase {
  int64_t rows, in, out;
  std::vector<uint8_t> x;     // [rows, in], padded to BucketRows(rows) rows
  std::vector<float> w;       // [out, in], integers with |w| <= max, max in every row
  std::vector<int64_t> want;  // [rows, out], exact
};

enum class Fill { kRandom, kExtreme, kAlternating };

IntCase MakeIntCase(int64_t rows, int64_t in, int64_t out, int weight_max, Fill fill,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  IntCase c{rows, in, out, {}, {}, {}};
  c.x.resize(static_cast<size_t>(BucketRows(rows) * in));
  c.w.resize(static_cast<size_t>(out * in));
  std::uniform_int_distribution<int> u8(0, 255), s8(-weight_max, weight_max);
  for (int64_t i = 0; i < rows * in; ++i) {
    c.x[i] = static_cast<uint8_t>(fill == Fill::kRandom ? u8(rng) : 255);
  }
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) {
      float v = static_cast<float>(s8(rng));
      if (fill == Fill::kExtreme) v = o % 2 ? weight_max : -weight_max;
      if (fill == Fill::kAlternating) v = (k / 2 + o) % 2 ? weight_max : -weight_max;
      c.w[o * in + k] = v;
    }
    c.w[o * in] = static_cast<float>(weight_max);  // Scale exactly 1: weights stay integers.
  }
  c.want.assign(static_cast<size_t>(rows * out), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      int64_t acc = 0;
      for (int64_t k = 0; k < in; ++k) {
        acc += int64_t{c.x[r * in + k]} * static_cast<int64_t>(c.w[o * in + k]);
      }
      c.want[r * out + o] = acc;
    }
  }
  return c;
}

// The number of outputs that differ from the exact result.
int64_t Mismatches(const IntCase& c, int weight_max) {
  DnnlContext context;
  Int8MatmulCache cache(&context);
  auto dense = QuantizedDense::Create(&cache, c.w.data(), c.in, c.out, weight_max);
  EXPECT_TRUE(dense.ok()) << dense.status();
  if (!dense.ok()) return -1;
  for (int64_t o = 0; o < c.out; ++o) EXPECT_EQ((*dense)->col_scale()[o], 1.0f);
  std::vector<int32_t> acc(static_cast<size_t>(BucketRows(c.rows) * c.out));
  EXPECT_TRUE((*dense)->Forward(c.x.data(), c.rows, acc.data()).ok());
  int64_t bad = 0;
  for (int64_t i = 0; i < c.rows * c.out; ++i) bad += acc[i] != c.want[i];
  return bad;
}

// Exact equality: integer products summed in int32 have no rounding, so any
// difference is an overflow (vpmaddubsw's int16 saturation) or a bug.
TEST(Int8MatmulTest, MatchesExactIntegerProductAtTheEngineWeightRange) {
  const int max = Int8WeightMax();
  for (Fill fill : {Fill::kRandom, Fill::kExtreme, Fill::kAlternating}) {
    for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 32, 8},
                                 {37, 384, 1152},
                                 {128, 768, 3072},
                                 {72, 3072, 768},
                                 {9, 100, 21}}) {
      const IntCase c = MakeIntCase(rows, in, out, max, fill, static_cast<uint32_t>(rows + in));
      EXPECT_EQ(Mismatches(c, max), 0) << rows << "x" << in << "x" << out << " fill "
                                       << static_cast<int>(fill) << " max " << max;
    }
  }
}

// Why the range is 63 without VNNI: at 127, vpmaddubsw's pair sums overflow
// int16 and oneDNN's result is wrong. If this fails, oneDNN multiplies
// exactly here after all and Int8WeightMax() could return 127.
// Depends on the instruction-set level (the ISA matrix runs it at each):
// it skips where oneDNN runs with VNNI (avx512_vnni, avx512_bf16; also
// avx2_vnni, where oneDNN 2.6 may or may not use it).
TEST(Int8MatmulTest, FullRangeWeightsSaturateWithoutVnni) {
  if (Int8WeightMax() == 127) {
    GTEST_SKIP() << "oneDNN runs " << OneDnnIsaName() << ", with VNNI: the full range is exact "
                 << "and in use";
  }
  if (dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx2_vnni) {
    GTEST_SKIP() << "oneDNN runs avx2_vnni: oneDNN 2.6 may or may not multiply with AVX-VNNI; 63 "
                 << "is exact either way";
  }
  const IntCase c = MakeIntCase(16, 256, 64, 127, Fill::kRandom, 3);
  EXPECT_GT(Mismatches(c, 127), 0);
}

TEST(Int8MatmulTest, WeightQuantizationIsPerRowSymmetric) {
  // Rows of very different magnitude each get their own scale; the round
  // trip is within half a step of that row's scale.
  const int64_t in = 50, out = 3;
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(in * out);
  const float magnitude[] = {1e-3f, 1.0f, 300.0f};
  for (int64_t i = 0; i < in * out; ++i) w[i] = u(rng) * magnitude[i / in];
  std::vector<int8_t> q(in * out);
  std::vector<float> scale(out);
  std::vector<int32_t> sum(out);
  QuantizeWeights(w.data(), in, out, 63, q.data(), scale.data(), sum.data());
  for (int64_t o = 0; o < out; ++o) {
    float max_abs = 0;
    int32_t total = 0;
    for (int64_t k = 0; k < in; ++k) max_abs = std::max(max_abs, std::fabs(w[o * in + k]));
    EXPECT_FLOAT_EQ(scale[o], max_abs / 63);
    for (int64_t k = 0; k < in; ++k) {
      EXPECT_LE(std::abs(q[o * in + k]), 63);
      EXPECT_LE(std::fabs(q[o * in + k] * scale[o] - w[o * in + k]), 0.5f * scale[o] * 1.0001f);
      total += q[o * in + k];
    }
    EXPECT_EQ(sum[o], total);
  }
}

// ---- the int8 encoder against the float32 one ----

// The acceptance bar for pooled embeddings.
constexpr double kMinMeanCosine = 0.995;
constexpr double kMinCosine = 0.99;
// And for their centred form (CosineStats), where a sequence's own signal
// must dominate the int8 error.
constexpr double kMinMeanCenteredCosine = 0.99;
constexpr double kMinCenteredCosine = 0.97;

void ExpectAcceptable(const CosineStats& s) {
  EXPECT_GE(s.mean, kMinMeanCosine) << "min " << s.min;
  EXPECT_GE(s.min, kMinCosine) << "mean " << s.mean;
  EXPECT_GE(s.centered_mean, kMinMeanCenteredCosine) << "min " << s.centered_min;
  EXPECT_GE(s.centered_min, kMinCenteredCosine) << "mean " << s.centered_mean;
}

class Int8GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8GoldenTest, PooledOutputsMatchFloat32) {
  const std::string dir = std::string(GOLDEN_DIR) + "/" + GetParam();
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(dir + "/reference.json"));
  std::vector<std::vector<int32_t>> storage;
  const std::vector<Sequence> batch = GoldenBatch(reference, &storage);
  const CosineStats stats = ComparePooled(dir + "/model", batch, Precision::kInt8);
  ExpectAcceptable(stats);
  PrintStats("int8", GetParam(), stats);
}

INSTANTIATE_TEST_SUITE_P(Golden, Int8GoldenTest, ::testing::ValuesIn(testing::kBertFixtures));
// The bar of Int8FamilyTest: mean and minimum per-token cosine.
struct CosineBar {
  double mean, min;
};

// The decoder families measure well above the common bar; theirs is twice
// the error (1 - cosine) measured at their worst ISA level (avx2 and
// scalar: 7-bit weights), rounded down. Measured 2026-11-27: qwen3 (its FFN
// output two-level) mean 0.99924 min 0.99503, gemma3_text mean 0.99904 min
// 0.99622; at avx512_bf16 0.99972 / 0.99706 and 0.99960 / 0.99763.
CosineBar FamilyBar(const std::string& fixture) {
  if (fixture == "families/qwen3") return {0.9985, 0.990};
  if (fixture == "families/gemma3_text") return {0.998, 0.992};
  return {kMinMeanCosine, 0.98};
}

// Every family of the registry in int8, token by token against the PyTorch
// reference (float64) of its fixture: the last hidden state of each token,
// mean cosine >= 0.995 and none below 0.98 (FamilyBar: tighter for the
// decoder families). These fixtures are made for
// float parity (large embeddings, biases and FFN gains, see
// make_families.py), which makes int8's relative error larger than on
// trained models; the pooled int8-vs-fp32 bars of Int8GoldenTest, whose
// centred part is built for near-identical random vectors, are not the
// measure here.
class Int8FamilyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8FamilyTest, TokenStatesMatchPyTorch) {
  const std::string dir = std::string(GOLDEN_DIR) + "/" + GetParam();
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(dir + "/reference.json"));
  std::vector<std::vector<int32_t>> storage;
  const std::vector<Sequence> batch = GoldenBatch(reference, &storage);
  EncoderOptions options;
  options.precision = Precision::kInt8;
  auto encoder = Encoder::Load(dir + "/model", options);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());
  const size_t h = static_cast<size_t>(result.hidden_size);
  double sum = 0, min = 1;
  int count = 0;
  for (int s = 0; s < result.num_sequences(); ++s) {
    for (int t = 0; t < result.num_tokens(s); ++t) {
      const std::vector<float> want = reference["hidden_states"][s][t].get<std::vector<float>>();
      const float* got = result.sequence_states(s) + t * h;
      const double cosine = Cosine(want, std::vector<float>(got, got + h));
      sum += cosine;
      min = std::min(min, cosine);
      ++count;
    }
  }
  std::printf("[ int8 cosine ] %s: per token against PyTorch, mean %.5f min %.5f over %d tokens\n",
              GetParam().c_str(), sum / count, min, count);
  const CosineBar bar = FamilyBar(GetParam());
  EXPECT_GE(sum / count, bar.mean);
  EXPECT_GE(min, bar.min);
}

INSTANTIATE_TEST_SUITE_P(Families, Int8FamilyTest, ::testing::ValuesIn(testing::FamilyFixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::FixtureTestName(info.param);
                         });

class Int8MiniLmTest : public ::testing::TestWithParam<LayerNormPlacement> {};

// The golden fixtures are 32-64 wide; this is the MiniLM width and depth the
// service runs, where quantization error accumulates over 6 layers.
TEST_P(Int8MiniLmTest, LoadsAndPooledOutputsMatchFloat32) {
  const std::string dir = testing::WriteTinyModel(
      std::string("int8_minilm_") + LayerNormPlacementName(GetParam()), MiniLmSpec(GetParam()));
  const auto ids = RandomSequences({128, 5, 64, 17, 100, 1, 33, 128}, 250, 5);
  std::vector<Sequence> batch;
  for (const auto& s : ids) batch.push_back({s, {}});
  const CosineStats stats = ComparePooled(dir, batch, Precision::kInt8);
  ExpectAcceptable(stats);
  PrintStats("int8", std::string("MiniLM ") + LayerNormPlacementName(GetParam()), stats);
}

// Each row is quantized with its own scale, integer matmuls are exact
// whatever the row blocking, and the epilogues work row by row, so a
// sequence alone and in a batch take bit-identical paths through the int8
// parts; only float attention remains, and it is per sequence. 1e-6 allows
// last-bit differences and nothing more.
TEST_P(Int8MiniLmTest, SequenceAloneEqualsSequenceInBatch) {
  RandomModelSpec spec = TinyModelSpec(GetParam());
  const std::string dir = testing::WriteTinyModel(
      std::string("int8_isolation_") + LayerNormPlacementName(GetParam()), spec);
  EncoderOptions options;
  options.precision = Precision::kInt8;
  auto encoder = Encoder::Load(dir, options);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  // Lengths cross the matmul row buckets (8, 64, 72, ...) on purpose.
  const auto ids =
      RandomSequences({1, 9, 64, 3, 57, 17, 8, 33}, (*encoder)->config().vocab_size, 11);
  std::vector<Sequence> batch;
  for (const auto& s : ids) batch.push_back({s, {}});
  EncodeResult together, alone;
  ASSERT_TRUE((*encoder)->Encode(batch, &together).ok());
  const int h = together.hidden_size;
  for (size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE((*encoder)->Encode({batch[i]}, &alone).ok());
    float max_diff = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(alone.num_tokens(0)) * h; ++k) {
      max_diff = std::max(max_diff, std::abs(alone.sequence_states(0)[k] -
                                             together.sequence_states(static_cast<int>(i))[k]));
    }
    EXPECT_LE(max_diff, 1e-6f) << "sequence " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Placements, Int8MiniLmTest,
                         ::testing::Values(LayerNormPlacement::kPost, LayerNormPlacement::kPre));

}  // namespace
}  // namespace engine
