// The bf16 path: the conversion to bf16 against hand-worked values, the
// checkpoint reader keeping a BF16 file's values as stored, the refusal on
// CPUs (or instruction-set levels) without native bf16, and the bf16 encoder
// against the float32 one (itself checked against PyTorch in parity_test) on
// every family's fixture and a MiniLM-shaped model. The encoder tests skip,
// saying why, where the level in use lacks avx512_bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/isa.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "kernels/bf16.h"
#include "nlohmann/json.hpp"
#include "precision_compare.h"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

using testing::ComparePooled;
using testing::CosineStats;
using testing::GoldenBatch;
using testing::PrintStats;

// The bar: every pooled vector (CLS and mean, every sequence) of
// the bf16 encoder within cosine 0.999 of float32's. bf16 keeps 8 bits of
// significand (relative rounding error <= 2^-9 per operand), and the
// products are summed in float32, so a layer's output differs from
// float32's by a few parts in a thousand; LayerNorm keeps that from growing
// with depth: raw pooled cosines stay above 0.9999, centred ones above
// 0.9993 on these models.
constexpr double kMinBf16Cosine = 0.999;

float Bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

TEST(Bf16ConversionTest, RoundsToNearestTiesToEven) {
  using kernels::FloatToBf16;
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xc000);
  // 1 + 2^-8 lies halfway between 1 (even) and 1 + 2^-7: ties to even, down.
  EXPECT_EQ(FloatToBf16(Bits(0x3f808000)), 0x3f80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(FloatToBf16(Bits(0x3f818000)), 0x3f82);
  // Just above and below half way.
  EXPECT_EQ(FloatToBf16(Bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(FloatToBf16(Bits(0x3f807fff)), 0x3f80);
  // The largest float rounds up to infinity, as IEEE rounding does.
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  // A NaN whose payload sits in the low half must not become infinity.
  const uint16_t nan = FloatToBf16(Bits(0x7f800001));
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x007f, 0);
  EXPECT_EQ(kernels::Bf16ToFloat(0x3fc0), 1.5f);
}

TEST(Bf16ConversionTest, ConvertToBf16MatchesTheScalarRounding) {
  // Large enough to be split over threads, with an odd tail.
  const int64_t n = (int64_t{1} << 17) + 3;
  std::vector<float> in(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) in[i] = std::sin(static_cast<float>(i)) * 1000.0f;
  std::vector<uint16_t> out(static_cast<size_t>(n), 0);
  kernels::ConvertToBf16(in.data(), n, out.data());
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], kernels::FloatToBf16(in[i])) << "element " << i;
    // Within half a unit in the last place of 8 significant bits.
    ASSERT_LE(std::fabs(kernels::Bf16ToFloat(out[i]) - in[i]), std::fabs(in[i]) * 0x1p-8f);
  }
}

TEST(Bf16ConversionTest, TensorsConvertFromEachFloatDtype) {
  // F32 1.0, 1 + 2^-8 (tie, to even), -3.0; F16 1.5 (0x3e00), -0.5 (0xb800),
  // 65504 (0x7bff, rounds up to 65536 in bf16); BF16 bits kept as stored,
  // whatever they are (a NaN payload included).
  const float f32[] = {1.0f, Bits(0x3f808000), -3.0f};
  const uint16_t f16[] = {0x3e00, 0xb800, 0x7bff};
  const uint16_t bf16[] = {0x3f80, 0x7fc1, 0x0001};
  struct Case {
    DType dtype;
    const void* data;
    size_t bytes;
    std::vector<uint16_t> want;
  };
  const Case cases[] = {{DType::kF32, f32, sizeof(f32), {0x3f80, 0x3f80, 0xc040}},
                        {DType::kF16, f16, sizeof(f16), {0x3fc0, 0xbf00, 0x4780}},
                        {DType::kBF16, bf16, sizeof(bf16), {0x3f80, 0x7fc1, 0x0001}}};
  for (const Case& c : cases) {
    TensorView view;
    view.dtype = c.dtype;
    view.shape = {3};
    view.data = static_cast<const uint8_t*>(c.data);
    view.nbytes = c.bytes;
    std::vector<uint16_t> got(3, 0);
    ConvertToBf16(view, got.data());
    EXPECT_EQ(got, c.want) << DTypeName(c.dtype);
  }
}

// The bf16 fixture's checkpoint is stored in BF16: read for bf16 serving,
// every weight is the file's own bits (no rounding through float32 could
// change them, but the reader must not alter them either).
TEST(Bf16CheckpointTest, ABf16CheckpointKeepsItsStoredValues) {
  const std::string dir = std::string(GOLDEN_DIR) + "/bf16/model";
  auto checkpoint = Checkpoint::Open(dir, {"bert."});  // a BERT checkpoint
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  int checked = 0;
  for (const auto& [name, entry] : (*checkpoint)->entries()) {
    const TensorView& view = *entry.view;
    ASSERT_EQ(view.dtype, DType::kBF16) << name;
    std::vector<uint16_t> got(static_cast<size_t>(view.num_elements()));
    std::vector<uint16_t> stored(got.size());
    std::memcpy(stored.data(), view.data, view.nbytes);  // before ReadBf16 releases the pages
    ASSERT_TRUE((*checkpoint)->ReadBf16(name, view.shape, got.data()).ok()) << name;
    EXPECT_EQ(got, stored) << name;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(Bf16RefusalTest, Bf16NeedsTheAvx512Bf16Level) {
  for (IsaLevel level : kAllIsaLevels) {
    EXPECT_TRUE(PrecisionSupported(Precision::kFloat32, level).ok());
    EXPECT_TRUE(PrecisionSupported(Precision::kInt8, level).ok());
    const absl::Status bf16 = PrecisionSupported(Precision::kBf16, level);
    if (level == IsaLevel::kAvx512Bf16) {
      EXPECT_TRUE(bf16.ok()) << bf16;
      continue;
    }
    EXPECT_EQ(bf16.code(), absl::StatusCode::kFailedPrecondition) << IsaLevelName(level);
    // Names what is missing: the CPU feature, or the level that excludes it.
    const std::string message(bf16.message());
    if (CpuHasIsaLevel(IsaLevel::kAvx512Bf16)) {
      EXPECT_NE(message.find("avx512_bf16"), std::string::npos) << message;
      EXPECT_NE(message.find(IsaLevelName(level)), std::string::npos) << message;
    } else {
      EXPECT_NE(message.find("AVX512_BF16"), std::string::npos) << message;
    }
  }
}

// Below avx512_bf16 (the CPU lacks it, or ENCODER_ISA caps the level, as the
// ISA matrix does), loading in bf16 fails with that reason, not slowly.
TEST(Bf16RefusalTest, LoadingInBf16BelowTheLevelFails) {
  const absl::StatusOr<IsaLevel> level = ActiveIsaLevel();
  ASSERT_TRUE(level.ok()) << level.status();
  if (*level == IsaLevel::kAvx512Bf16) GTEST_SKIP() << "the level in use runs bf16";
  EncoderOptions options;
  options.precision = Precision::kBf16;
  const auto encoder = Encoder::Load(testing::WriteTinyModel("bf16_refused"), options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(encoder.status().message().find("bf16"), std::string::npos) << encoder.status();
}

void ExpectWithinBar(const std::string& name, const CosineStats& stats) {
  PrintStats("bf16", name, stats);
  EXPECT_GE(stats.min, kMinBf16Cosine) << "mean " << stats.mean;
  // Centred (CosineStats): what tells sequences apart meets the bar too.
  EXPECT_GE(stats.centered_min, kMinBf16Cosine) << "centred mean " << stats.centered_mean;
  EXPECT_GT(stats.count, 0);
}

// Every parity model: BERT's fixtures (post- and pre-LN, variants, BF16) and
// the fixture of every other family of the registry.
class Bf16FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Bf16FixtureTest, PooledOutputsMatchFloat32) {
  SKIP_WITHOUT_BF16();
  const std::string dir = std::string(GOLDEN_DIR) + "/" + GetParam();
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(dir + "/reference.json"));
  std::vector<std::vector<int32_t>> storage;
  const std::vector<Sequence> batch = GoldenBatch(reference, &storage);
  ExpectWithinBar(GetParam(), ComparePooled(dir + "/model", batch, Precision::kBf16));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Bf16FixtureTest, ::testing::ValuesIn(testing::ParityFixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::FixtureTestName(info.param);
                         });

class Bf16MiniLmTest : public ::testing::TestWithParam<LayerNormPlacement> {};

TEST_P(Bf16MiniLmTest, PooledOutputsMatchFloat32) {
  SKIP_WITHOUT_BF16();
  const std::string dir =
      testing::WriteTinyModel(std::string("bf16_minilm_") + LayerNormPlacementName(GetParam()),
                              testing::MiniLmSpec(GetParam()));
  const auto ids = testing::RandomSequences({128, 5, 64, 17, 100, 1, 33, 128}, 250, 5);
  std::vector<Sequence> batch;
  for (const auto& s : ids) batch.push_back({s, {}});
  ExpectWithinBar(std::string("MiniLM ") + LayerNormPlacementName(GetParam()),
                  ComparePooled(dir, batch, Precision::kBf16));
}

INSTANTIATE_TEST_SUITE_P(Placements, Bf16MiniLmTest,
                         ::testing::Values(LayerNormPlacement::kPost, LayerNormPlacement::kPre));

}  // namespace
}  // namespace engine
