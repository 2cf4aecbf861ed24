// The engine against PyTorch: fixtures in tests/golden/ were produced by
// tests/golden/make_golden.py from torch.nn modules (TransformerEncoderLayer
// with norm_first=False and True, a BERT assembled with Hugging Face names)
// and tests/golden/make_families.py (RoBERTa, XLM-RoBERTa, CamemBERT,
// DistilBERT, MPNet, ELECTRA as module trees with the hub's names),
// computed in float64 with the sequences padded into one batch.
//
// Tolerance: the engine computes in float32; with O(1) activations after
// LayerNorm, float32 rounding through a few layers stays around 1e-6, so
// max |out - ref| <= 1e-4 and ||out - ref|| / ||ref|| <= 1e-5 per token
// leave room for summation order while catching any real error (a wrong
// bias, eps or head split moves outputs by 1e-2 or more). The same bounds
// hold at every instruction-set level (the ISA matrix runs this test at
// each): the levels change summation order (vector width, oneDNN's kernels),
// i.e. rounding at the 1e-6 level, never the math.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

constexpr double kMaxAbsError = 1e-4;
constexpr double kMaxRelativeError = 1e-5;

struct Fixture {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<int32_t>> token_types;
  nlohmann::json reference;
};

Fixture LoadFixture(const std::string& name) {
  Fixture f;
  f.reference = nlohmann::json::parse(
      testing_support::ReadFile(std::string(GOLDEN_DIR) + "/" + name + "/reference.json"));
  for (const auto& input : f.reference["inputs"]) {
    f.ids.push_back(input["ids"].get<std::vector<int32_t>>());
    f.token_types.push_back(input.contains("token_type_ids")
                                ? input["token_type_ids"].get<std::vector<int32_t>>()
                                : std::vector<int32_t>{});
  }
  return f;
}

// Compares one vector against its reference at the stated tolerances.
void ExpectClose(const float* out, const nlohmann::json& ref, const std::string& what) {
  double diff_sq = 0, ref_sq = 0, max_abs = 0;
  for (size_t c = 0; c < ref.size(); ++c) {
    const double r = ref[c].get<double>();
    const double d = out[c] - r;
    diff_sq += d * d;
    ref_sq += r * r;
    max_abs = std::max(max_abs, std::abs(d));
  }
  EXPECT_LE(max_abs, kMaxAbsError) << what;
  EXPECT_LE(std::sqrt(diff_sq / std::max(ref_sq, 1e-30)), kMaxRelativeError) << what;
}

class ParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParityTest, MatchesPyTorch) {
  const Fixture f = LoadFixture(GetParam());
  auto encoder = Encoder::Load(std::string(GOLDEN_DIR) + "/" + GetParam() + "/model", {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ(LayerNormPlacementName((*encoder)->config().layer_norm_placement),
            f.reference["layer_norm_placement"].get<std::string>());
  if (f.reference.contains("family")) {
    EXPECT_EQ((*encoder)->config().model_type, f.reference["family"].get<std::string>());
    EXPECT_EQ((*encoder)->config().max_length(), f.reference["max_length"].get<int>());
  }

  std::vector<Sequence> batch;
  for (size_t i = 0; i < f.ids.size(); ++i) batch.push_back({f.ids[i], f.token_types[i]});
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());

  const int64_t h = result.hidden_size;
  const auto& hidden = f.reference["hidden_states"];
  ASSERT_EQ(hidden.size(), batch.size());
  for (size_t s = 0; s < batch.size(); ++s) {
    ASSERT_EQ(static_cast<int>(hidden[s].size()), result.num_tokens(static_cast<int>(s)));
    for (size_t t = 0; t < hidden[s].size(); ++t) {
      ASSERT_EQ(static_cast<int64_t>(hidden[s][t].size()), h);
      ExpectClose(result.sequence_states(static_cast<int>(s)) + t * h, hidden[s][t],
                  "sequence " + std::to_string(s) + " token " + std::to_string(t));
    }
  }
  std::vector<float> pooled(static_cast<size_t>(h));
  for (auto [key, pooling] : {std::pair<const char*, Pooling>{"cls", Pooling::kCls},
                              {"mean", Pooling::kMean},
                              {"pooler", Pooling::kPooler},
                              {"lasttoken", Pooling::kLastToken}}) {
    if (!f.reference.contains(key)) {
      EXPECT_NE(pooling, Pooling::kCls);
      if (pooling == Pooling::kPooler) {
        EXPECT_FALSE((*encoder)->has_pooler());
      }
      continue;
    }
    for (size_t s = 0; s < batch.size(); ++s) {
      ASSERT_TRUE(
          (*encoder)->Pool(result, static_cast<int>(s), pooling, false, pooled.data()).ok());
      ExpectClose(pooled.data(), f.reference[key][s],
                  std::string(key) + " pooling of sequence " + std::to_string(s));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, ParityTest, ::testing::ValuesIn(testing::kBertFixtures));

// One fixture per family of the architecture registry, from
// tests/golden/make_families.py: hub tensor names with and without the task
// prefix, unused heads and the legacy position_ids buffer in the
// checkpoint, F32 / F16 / BF16, inputs of 1 to 128 tokens in one batch.
INSTANTIATE_TEST_SUITE_P(Families, ParityTest, ::testing::ValuesIn(testing::FamilyFixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::FixtureTestName(info.param);
                         });

}  // namespace
}  // namespace engine
