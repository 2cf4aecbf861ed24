// The server's use of the compact last layer (server/core/batching/kept_rows.h): the
// real engine backend on a tiny model asks for one token per sequence only
// when every input of the batch reads that token alone; a batch mixing a
// CLS and a mean-pooled embedding runs all rows and answers exactly as the
// full pass; the token counts (usage) stay the inputs' real lengths.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/sentence_pipeline.h"
#include "server/core/batching/engine_backend.h"
#include "server/core/batching/kept_rows.h"
#include "support/test_model.h"

namespace server {
namespace kept_rows_backend_test {

using engine::Pooling;
using engine::TokenRows;

core::OutputSpec Embedding(Pooling pooling, bool normalize = false) {
  core::OutputSpec spec;
  spec.pooling = pooling;
  spec.normalize = normalize;
  return spec;
}

core::OutputSpec Classify() {
  core::OutputSpec spec;
  spec.head = core::OutputHead::kClassify;
  return spec;
}

// Token ids of these lengths within the model's vocabulary, [CLS] first.
std::vector<std::vector<int32_t>> Ids(const std::vector<int>& lengths, int vocab) {
  std::vector<std::vector<int32_t>> ids;
  for (size_t s = 0; s < lengths.size(); ++s) {
    std::vector<int32_t> one(static_cast<size_t>(lengths[s]));
    for (size_t t = 0; t < one.size(); ++t) {
      one[t] = t == 0 ? 2 : static_cast<int32_t>(5 + (s * 31 + t * 7) % (vocab - 5));
    }
    ids.push_back(std::move(one));
  }
  return ids;
}

// What each input's spec gives from a full pass of the whole batch.
std::vector<std::vector<float>> FullPassAnswers(engine::Encoder& encoder,
                                                const engine::SentencePipeline& pipeline,
                                                const std::vector<engine::Sequence>& batch,
                                                const std::vector<core::OutputSpec>& specs) {
  engine::EncodeResult full;
  EXPECT_TRUE(encoder.Encode(batch, &full).ok());
  std::vector<std::vector<float>> answers;
  for (int i = 0; i < static_cast<int>(specs.size()); ++i) {
    std::vector<float> values;
    if (specs[i].head == core::OutputHead::kClassify) {
      values.resize(static_cast<size_t>(encoder.classifier()->num_labels));
      EXPECT_TRUE(encoder.Classify(full, i, values.data()).ok());
    } else {
      engine::EmbeddingOptions options;
      options.pooling = {specs[i].pooling};
      options.normalize = specs[i].normalize;
      EXPECT_TRUE(engine::Embed(pipeline, encoder, full, i, options, &values).ok());
    }
    answers.push_back(std::move(values));
  }
  return answers;
}

// Runs `specs` on the backend and compares each answer with the full
// pass's within `tolerance` (0: bit for bit), and its tokens with the input's.
void ExpectFullPassAnswers(engine::Encoder& encoder, const std::vector<int>& lengths,
                           const std::vector<core::OutputSpec>& specs, float tolerance) {
  const engine::SentencePipeline pipeline;
  const auto ids = Ids(lengths, encoder.config().vocab_size);
  std::vector<engine::Sequence> batch;
  for (const auto& one : ids) batch.push_back({one, {}});
  const auto want = FullPassAnswers(encoder, pipeline, batch, specs);
  core::EngineBackend backend(&encoder);
  std::vector<core::InputOutput> outputs;
  ASSERT_TRUE(backend.Run(batch, specs, &outputs).ok());
  ASSERT_EQ(outputs.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(outputs[i].tokens, lengths[i]) << "input " << i;
    ASSERT_EQ(outputs[i].values.size(), want[i].size()) << "input " << i;
    for (size_t k = 0; k < want[i].size(); ++k) {
      if (tolerance == 0) {
        ASSERT_EQ(outputs[i].values[k], want[i][k]) << "input " << i << " value " << k;
      } else {
        ASSERT_NEAR(outputs[i].values[k], want[i][k], tolerance) << "input " << i << " value " << k;
      }
    }
  }
}

// A compact pass differs from the full one only by the order float sums are
// added in (tests/engine/kept_rows_test.cc).
constexpr float kCompactTolerance = 1e-5f;

TEST(KeptRowsBackendTest, AMixedBatchRunsAllRowsAndAnswersAsTheFullPass) {
  testing_support::TestModel model;
  const std::vector<core::OutputSpec> specs = {
      Embedding(Pooling::kCls), Embedding(Pooling::kMean, true), Embedding(Pooling::kCls, true)};
  EXPECT_EQ(core::RowsTheBatchNeeds(model.encoder(), {}, specs), TokenRows::kAll);
  ExpectFullPassAnswers(model.encoder(), {7, 12, 1}, specs, 0);
}

TEST(KeptRowsBackendTest, AClsBatchRunsTheKeptRowsWithTheFullPassAnswers) {
  testing_support::TestModel model;
  const std::vector<core::OutputSpec> specs = {
      Embedding(Pooling::kCls), Embedding(Pooling::kCls, true), Embedding(Pooling::kCls)};
  EXPECT_EQ(core::RowsTheBatchNeeds(model.encoder(), {}, specs), TokenRows::kFirst);
  ExpectFullPassAnswers(model.encoder(), {7, 12, 1}, specs, kCompactTolerance);
}

TEST(KeptRowsBackendTest, ALastTokenBatchRunsTheKeptRowsWithTheFullPassAnswers) {
  testing_support::TestModel model;
  const std::vector<core::OutputSpec> specs = {Embedding(Pooling::kLastToken),
                                               Embedding(Pooling::kLastToken, true)};
  EXPECT_EQ(core::RowsTheBatchNeeds(model.encoder(), {}, specs), TokenRows::kLast);
  ExpectFullPassAnswers(model.encoder(), {1, 20}, specs, kCompactTolerance);
}

TEST(KeptRowsBackendTest, OnlyInputsReadingOneTokenAloneAskForItsRow) {
  testing_support::TestModel model;
  const engine::Encoder& encoder = model.encoder();
  const engine::SentencePipeline none;
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, Embedding(Pooling::kCls)), TokenRows::kFirst);
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, Embedding(Pooling::kLastToken)),
            TokenRows::kLast);
  for (Pooling pooling : {Pooling::kNone, Pooling::kMean, Pooling::kMax, Pooling::kMeanSqrtLen,
                          Pooling::kWeightedMean}) {
    EXPECT_EQ(core::RowsAnInputReads(encoder, none, Embedding(pooling)), TokenRows::kAll)
        << engine::PoolingName(pooling);
  }
  // CLS after a prompt left out of pooling reads the token after the prompt.
  core::OutputSpec prompted = Embedding(Pooling::kCls);
  prompted.prompt_tokens = 3;
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, prompted), TokenRows::kAll);
  // The model's pipeline: every one of its modes must read the same token.
  core::OutputSpec model_pooling = Embedding(Pooling::kCls);
  model_pooling.model_pooling = true;
  engine::SentencePipeline pipeline;
  pipeline.pooling = {Pooling::kMean};
  EXPECT_EQ(core::RowsAnInputReads(encoder, pipeline, model_pooling), TokenRows::kAll);
  pipeline.pooling = {Pooling::kCls, Pooling::kMean};
  EXPECT_EQ(core::RowsAnInputReads(encoder, pipeline, model_pooling), TokenRows::kAll);
  pipeline.pooling = {Pooling::kLastToken};
  EXPECT_EQ(core::RowsAnInputReads(encoder, pipeline, model_pooling), TokenRows::kLast);
  // Per-token heads, and a batch whose inputs read different tokens.
  core::OutputSpec sparse, multi;
  sparse.head = core::OutputHead::kSparse;
  multi.head = core::OutputHead::kMulti;
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, sparse), TokenRows::kAll);
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, multi), TokenRows::kAll);
  EXPECT_EQ(core::RowsTheBatchNeeds(encoder, none,
                                    {Embedding(Pooling::kCls), Embedding(Pooling::kLastToken)}),
            TokenRows::kAll);
  // A model without a classifier: classify fails later, on all rows.
  EXPECT_EQ(core::RowsAnInputReads(encoder, none, Classify()), TokenRows::kAll);
}

std::unique_ptr<engine::Encoder> LoadHeadsFixture(const std::string& name) {
  engine::EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 1024;
  auto encoder =
      engine::Encoder::Load(std::string(GOLDEN_DIR) + "/heads/" + name + "/model", options);
  EXPECT_TRUE(encoder.ok()) << name << ": " << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

// Rerank batches: the cross-encoder reads [CLS], Qwen3-Reranker its last
// token, ModernBERT's mean-pooled head every token.
TEST(KeptRowsBackendTest, ClassifyBatchesRunTheRowsTheHeadReads) {
  for (const auto& [fixture, rows] :
       {std::pair<std::string, TokenRows>{"bert_reranker", TokenRows::kFirst},
        {"qwen3_reranker", TokenRows::kLast},
        {"modernbert_reranker", TokenRows::kAll}}) {
    SCOPED_TRACE(fixture);
    std::unique_ptr<engine::Encoder> encoder = LoadHeadsFixture(fixture);
    ASSERT_NE(encoder, nullptr);
    const std::vector<core::OutputSpec> specs = {Classify(), Classify(), Classify()};
    EXPECT_EQ(core::RowsTheBatchNeeds(*encoder, {}, specs), rows);
    ExpectFullPassAnswers(*encoder, {9, 1, 20}, specs,
                          rows == TokenRows::kAll ? 0 : kCompactTolerance);
    // A CLS embedding beside a last-token head's scores: all rows.
    if (rows == TokenRows::kLast) {
      ExpectFullPassAnswers(*encoder, {9, 4}, {Classify(), Embedding(Pooling::kCls)}, 0);
    }
  }
}

}  // namespace kept_rows_backend_test
}  // namespace server
