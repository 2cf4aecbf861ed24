// Encode's compact last layer (EncodeOptions::rows, engine/token_rows.h):
// on every parity model (BERT's fixtures and every family's) and every
// classifier fixture, in fp32, int8 and bf16 (where the level runs it), the
// kept rows' pooled vectors and logits equal the full pass's, and what needs
// every token is refused on a compact result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/encoder.h"
#include "precision_compare.h"
#include "test_models.h"

namespace engine {
namespace kept_rows_test {

// The compact pass runs the last layer's output projection, Add & Norms and
// FFN on one row per sequence instead of all of them: the same inputs, but
// oneDNN blocks a matmul of 5 rows differently from one of 60, so float
// sums may be added in another order (fp32 and bf16, whose products are
// summed in fp32): a few ulps of values of order 1 after a LayerNorm, and
// the heads add one more matmul. int8 matmuls sum int32 products exactly in
// any order and quantize each row on its own, so only the float epilogues
// could differ; the same bar holds (measured: see the printed maxima).
constexpr float kMaxAbs = 1e-5f;
constexpr float kMaxRel = 1e-5f;

// Lengths of the test batch: several, different, one of them 1 (its first
// token is its last), and within every fixture's maximum (38 tokens).
const std::vector<int> kLengths = {9, 1, 23, 4, 16, 2};

std::unique_ptr<Encoder> Load(const std::string& dir, Precision precision) {
  EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 1024;
  options.precision = precision;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  EXPECT_TRUE(encoder.ok()) << dir << ": " << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

struct Batch {
  std::vector<std::vector<int32_t>> ids;
  std::vector<Sequence> sequences;
};

void MakeBatch(const Encoder& encoder, Batch* batch) {
  batch->ids = testing::RandomSequences(kLengths, encoder.config().vocab_size, 3);
  for (const auto& ids : batch->ids) batch->sequences.push_back({ids, {}});
}

// A fixture's model (GOLDEN_DIR/`fixture`/model) and the test batch for it;
// a null encoder when it does not load (reported).
struct Loaded {
  std::unique_ptr<Encoder> encoder;
  Batch batch;
};

Loaded LoadWithBatch(const std::string& fixture, Precision precision) {
  Loaded loaded;
  loaded.encoder = Load(std::string(GOLDEN_DIR) + "/" + fixture + "/model", precision);
  if (loaded.encoder != nullptr) MakeBatch(*loaded.encoder, &loaded.batch);
  return loaded;
}

// The largest difference of `got` from `want` over its scale.
float MaxRelativeDiff(const std::vector<float>& want, const std::vector<float>& got) {
  float worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::fabs(got[i] - want[i]) / (kMaxAbs / kMaxRel + std::fabs(want[i])));
  }
  return worst;
}

void ExpectClose(const std::vector<float>& want, const std::vector<float>& got,
                 const std::string& what, float* worst) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - want[i]), kMaxAbs + kMaxRel * std::fabs(want[i]))
        << what << " value " << i;
  }
  *worst = std::max(*worst, MaxRelativeDiff(want, got));
}

std::vector<float> Pooled(const Encoder& encoder, const EncodeResult& result, int index,
                          Pooling pooling) {
  std::vector<float> out(static_cast<size_t>(result.hidden_size));
  const absl::Status s = encoder.Pool(result, index, pooling, false, out.data());
  EXPECT_TRUE(s.ok()) << PoolingName(pooling) << ": " << s;
  return out;
}

std::string PrecisionTestName(Precision precision) { return PrecisionName(precision); }

#define SKIP_UNLESS_PRECISION_RUNS(precision)                 \
  do {                                                        \
    if ((precision) == Precision::kBf16) SKIP_WITHOUT_BF16(); \
  } while (0)

using FixtureAndPrecision = std::tuple<std::string, Precision>;

class KeptRowsPoolingTest : public ::testing::TestWithParam<FixtureAndPrecision> {};

// The CLS (and pooler) vector of a kFirst pass and the last-token vector of
// a kLast pass equal the full pass's; the token counts stay the real ones.
TEST_P(KeptRowsPoolingTest, KeptTokensEqualTheFullPass) {
  const auto& [fixture, precision] = GetParam();
  SKIP_UNLESS_PRECISION_RUNS(precision);
  Loaded loaded = LoadWithBatch(fixture, precision);
  ASSERT_NE(loaded.encoder, nullptr);
  std::unique_ptr<Encoder>& encoder = loaded.encoder;
  Batch& batch = loaded.batch;
  EncodeResult full;
  ASSERT_TRUE(encoder->Encode(batch.sequences, &full).ok());
  float worst = 0;
  for (const auto& [rows, pooling] : {std::pair{TokenRows::kFirst, Pooling::kCls},
                                      std::pair{TokenRows::kLast, Pooling::kLastToken}}) {
    EncodeOptions options;
    options.rows = rows;
    EncodeResult compact;
    ASSERT_TRUE(encoder->Encode(batch.sequences, &compact, options).ok());
    ASSERT_EQ(compact.rows, rows);
    EXPECT_EQ(compact.offsets, full.offsets);
    EXPECT_EQ(compact.hidden_states.size(), kLengths.size() * compact.hidden_size);
    for (int i = 0; i < compact.num_sequences(); ++i) {
      EXPECT_EQ(compact.num_tokens(i), kLengths[static_cast<size_t>(i)]);
      const std::string what = std::string(PoolingName(pooling)) + " sequence " + std::to_string(i);
      ExpectClose(Pooled(*encoder, full, i, pooling), Pooled(*encoder, compact, i, pooling), what,
                  &worst);
      if (rows == TokenRows::kFirst && encoder->has_pooler()) {
        ExpectClose(Pooled(*encoder, full, i, Pooling::kPooler),
                    Pooled(*encoder, compact, i, Pooling::kPooler), "pooler " + what, &worst);
      }
    }
  }
  std::printf("[ kept rows ] %s %s: max |diff| / (1 + |value|) %.3g\n", fixture.c_str(),
              PrecisionName(precision), worst);
}

// The MiniLM shape the service runs (matmuls of 384 x 1536, row counts in
// the hundreds for the full pass, a handful for the kept rows).
class KeptRowsMiniLmTest
    : public ::testing::TestWithParam<std::tuple<LayerNormPlacement, Precision>> {};

TEST_P(KeptRowsMiniLmTest, KeptTokensEqualTheFullPass) {
  const auto& [placement, precision] = GetParam();
  SKIP_UNLESS_PRECISION_RUNS(precision);
  const std::string dir =
      testing::WriteTinyModel(std::string("kept_rows_minilm_") + LayerNormPlacementName(placement),
                              testing::MiniLmSpec(placement));
  std::unique_ptr<Encoder> encoder = Load(dir, precision);
  ASSERT_NE(encoder, nullptr);
  const auto ids = testing::RandomSequences({128, 1, 64, 17, 100, 2}, 250, 5);
  std::vector<Sequence> batch;
  for (const auto& one : ids) batch.push_back({one, {}});
  EncodeResult full;
  ASSERT_TRUE(encoder->Encode(batch, &full).ok());
  float worst = 0;
  for (const auto& [rows, pooling] : {std::pair{TokenRows::kFirst, Pooling::kCls},
                                      std::pair{TokenRows::kLast, Pooling::kLastToken}}) {
    EncodeOptions options;
    options.rows = rows;
    EncodeResult compact;
    ASSERT_TRUE(encoder->Encode(batch, &compact, options).ok());
    for (int i = 0; i < compact.num_sequences(); ++i) {
      ExpectClose(Pooled(*encoder, full, i, pooling), Pooled(*encoder, compact, i, pooling),
                  std::string(PoolingName(pooling)) + " sequence " + std::to_string(i), &worst);
    }
  }
  std::printf("[ kept rows ] MiniLM %s %s: max |diff| / (1 + |value|) %.3g\n",
              LayerNormPlacementName(placement), PrecisionName(precision), worst);
}

INSTANTIATE_TEST_SUITE_P(
    Placements, KeptRowsMiniLmTest,
    ::testing::Combine(::testing::Values(LayerNormPlacement::kPost, LayerNormPlacement::kPre),
                       ::testing::Values(Precision::kFloat32, Precision::kInt8, Precision::kBf16)),
    [](const ::testing::TestParamInfo<std::tuple<LayerNormPlacement, Precision>>& info) {
      return std::string(LayerNormPlacementName(std::get<0>(info.param))) + "_" +
             PrecisionName(std::get<1>(info.param));
    });

// What needs every token's state is refused on a compact result, naming why.
TEST_P(KeptRowsPoolingTest, WhatNeedsEveryTokenIsRefused) {
  const auto& [fixture, precision] = GetParam();
  SKIP_UNLESS_PRECISION_RUNS(precision);
  Loaded loaded = LoadWithBatch(fixture, precision);
  ASSERT_NE(loaded.encoder, nullptr);
  std::unique_ptr<Encoder>& encoder = loaded.encoder;
  Batch& batch = loaded.batch;
  EncodeOptions options;
  options.rows = TokenRows::kFirst;
  EncodeResult compact;
  ASSERT_TRUE(encoder->Encode(batch.sequences, &compact, options).ok());
  EXPECT_EQ(compact.sequence_states(0), nullptr);
  EXPECT_EQ(compact.token_state(0, 1), nullptr);
  std::vector<float> out(static_cast<size_t>(compact.hidden_size));
  for (Pooling pooling : {Pooling::kMean, Pooling::kMax, Pooling::kMeanSqrtLen,
                          Pooling::kWeightedMean, Pooling::kLastToken}) {
    const absl::Status s = encoder->Pool(compact, 0, pooling, false, out.data());
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << PoolingName(pooling) << ": " << s;
  }
  // Sequence 1 has one token: its first is its last, either pooling reads it.
  EXPECT_TRUE(encoder->Pool(compact, 1, Pooling::kLastToken, false, out.data()).ok());
  std::vector<float> vectors;
  int rows = 0;
  if (encoder->multi_vector() != nullptr) {
    EXPECT_EQ(encoder->MultiVectors(compact, 0, {}, &vectors, &rows).code(),
              absl::StatusCode::kFailedPrecondition);
  }
  std::vector<SparseEntry> sparse;
  if (encoder->has_masked_lm_head()) {
    EXPECT_EQ(encoder->Sparse(compact, 0, {}, &sparse).code(),
              absl::StatusCode::kFailedPrecondition);
  }
}

std::vector<Precision> Precisions() {
  return {Precision::kFloat32, Precision::kInt8, Precision::kBf16};
}

std::string FixtureAndPrecisionName(const ::testing::TestParamInfo<FixtureAndPrecision>& info) {
  return testing::FixtureTestName(std::get<0>(info.param)) + "_" +
         PrecisionTestName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KeptRowsPoolingTest,
                         ::testing::Combine(::testing::ValuesIn(testing::ParityFixtures()),
                                            ::testing::ValuesIn(Precisions())),
                         FixtureAndPrecisionName);

// Every fixture of tests/golden/heads whose checkpoint has a classifier
// (cross-encoders, sequence classifiers, causal-LM yes/no scorers).
std::vector<std::string> ClassifierFixtures() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GOLDEN_DIR) + "/heads")) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class KeptRowsClassifierTest : public ::testing::TestWithParam<FixtureAndPrecision> {};

// The logits from the rows the head reads equal the full pass's; a compact
// result without them is refused.
TEST_P(KeptRowsClassifierTest, LogitsEqualTheFullPass) {
  const auto& [fixture, precision] = GetParam();
  SKIP_UNLESS_PRECISION_RUNS(precision);
  Loaded loaded = LoadWithBatch("heads/" + fixture, precision);
  ASSERT_NE(loaded.encoder, nullptr);
  std::unique_ptr<Encoder>& encoder = loaded.encoder;
  Batch& batch = loaded.batch;
  if (encoder->classifier() == nullptr) GTEST_SKIP() << "no classifier (a masked-LM fixture)";
  const int labels = encoder->classifier()->num_labels;
  const TokenRows reads = encoder->classifier()->reads;
  EncodeResult full;
  ASSERT_TRUE(encoder->Encode(batch.sequences, &full).ok());
  float worst = 0;
  for (TokenRows rows : {TokenRows::kFirst, TokenRows::kLast}) {
    EncodeOptions options;
    options.rows = rows;
    EncodeResult compact;
    ASSERT_TRUE(encoder->Encode(batch.sequences, &compact, options).ok());
    for (int i = 0; i < compact.num_sequences(); ++i) {
      std::vector<float> want(static_cast<size_t>(labels)), got(want.size());
      ASSERT_TRUE(encoder->Classify(full, i, want.data()).ok());
      const absl::Status s = encoder->Classify(compact, i, got.data());
      // A one-token sequence's first token is its last.
      const bool holds = rows == reads || (reads != TokenRows::kAll && compact.num_tokens(i) == 1);
      if (!holds) {
        EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition)
            << TokenRowsName(rows) << " for a head reading " << TokenRowsName(reads) << ": " << s;
        continue;
      }
      ASSERT_TRUE(s.ok()) << s;
      ExpectClose(want, got, "logits of sequence " + std::to_string(i), &worst);
    }
  }
  std::printf("[ kept rows ] %s %s (reads %s): max |diff| / (1 + |value|) %.3g\n", fixture.c_str(),
              PrecisionName(precision), TokenRowsName(reads), worst);
}

INSTANTIATE_TEST_SUITE_P(Heads, KeptRowsClassifierTest,
                         ::testing::Combine(::testing::ValuesIn(ClassifierFixtures()),
                                            ::testing::ValuesIn(Precisions())),
                         FixtureAndPrecisionName);

// Which token each family's classifier reads, as the server decides by it.
TEST(KeptRowsHeadsTest, EachClassifierSaysWhichTokenItReads) {
  const std::vector<std::pair<std::string, TokenRows>> want = {
      {"bert_reranker", TokenRows::kFirst},           // the pooler on [CLS]
      {"xlm_roberta_classifier", TokenRows::kFirst},  // RoBERTa's head on <s>
      {"distilbert_classifier", TokenRows::kFirst},   // pre_classifier on [CLS]
      {"mpnet_reranker", TokenRows::kFirst},         {"electra_classifier", TokenRows::kFirst},
      {"modernbert_reranker", TokenRows::kAll},  // classifier_pooling "mean"
      {"qwen3_reranker", TokenRows::kLast},      // the yes/no judgment at the end
      {"qwen3_reranker_tied", TokenRows::kLast},
  };
  for (const auto& [fixture, reads] : want) {
    std::unique_ptr<Encoder> encoder =
        Load(std::string(GOLDEN_DIR) + "/heads/" + fixture + "/model", Precision::kFloat32);
    ASSERT_NE(encoder, nullptr);
    ASSERT_NE(encoder->classifier(), nullptr) << fixture;
    EXPECT_EQ(encoder->classifier()->reads, reads) << fixture;
  }
}

}  // namespace kept_rows_test
}  // namespace engine
