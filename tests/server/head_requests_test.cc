// Classify, rerank and sparse through the service core (EncodeDispatcher over
// the real builder and batcher, on FakeBackend, whose classify logits are
// tokens + label index and whose sparse weights are positions).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"
#include "support/core_service.h"

namespace server {
namespace {

using testing_support::CoreService;

// Texts of 1, 3 and 2 words: FakeBackend scores a pair by its token count.
core::RerankRequest ThreeTexts() {
  core::RerankRequest request;
  request.query = "hello";
  request.texts = {"world", "hello world again", "hello world"};
  return request;
}

TEST(HeadRequestsTest, RerankSortsByScoreWithIndices) {
  CoreService service;
  service.SetReranker();
  absl::StatusOr<core::RerankResult> result = service.Rerank(ThreeTexts());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->results.size(), 3u);
  EXPECT_EQ(result->results[0].index, 1);
  EXPECT_EQ(result->results[1].index, 2);
  EXPECT_EQ(result->results[2].index, 0);
  EXPECT_GT(result->results[0].score, result->results[1].score);
  EXPECT_TRUE(result->results[0].text.empty());
  // Every pair went out as a classify input.
  for (const core::OutputSpec& spec : service.backend().specs()) {
    EXPECT_EQ(spec.head, core::OutputHead::kClassify);
  }
}

TEST(HeadRequestsTest, RerankTopNAndReturnText) {
  CoreService service;
  service.SetReranker();
  core::RerankRequest request = ThreeTexts();
  request.top_n = 2;
  request.return_text = true;
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->results.size(), 2u);
  EXPECT_EQ(result->results[0].text, "hello world again");
  EXPECT_EQ(result->results[1].text, "hello world");
  // top_n above the count: all of them.
  request.top_n = 10;
  result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->results.size(), 3u);
}

TEST(HeadRequestsTest, ABigRerankIsSplitIntoPartsAndJoined) {
  server::core::RequestLimits limits;
  limits.max_inputs_per_request = 4;
  server::core::BatcherConfig config = CoreService::DefaultConfig();
  config.max_queue_tokens = 40;  // less than the whole request's tokens
  CoreService service(config, limits);
  service.SetReranker();
  core::RerankRequest request;
  request.query = "hello";
  for (int i = 0; i < 30; ++i) request.texts.push_back(i % 2 == 0 ? "world" : "hello world");
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->results.size(), 30u);
  // The odd (longer) texts first, each group in index order.
  for (int k = 0; k < 15; ++k) EXPECT_EQ(result->results[k].index, 2 * k + 1) << k;
  for (int k = 0; k < 15; ++k) EXPECT_EQ(result->results[15 + k].index, 2 * k) << k;
  size_t inputs = 0;
  for (const auto& batch : service.backend().batches()) {
    EXPECT_LE(batch.size(), 4u);
    inputs += batch.size();
  }
  EXPECT_EQ(inputs, 30u);
  EXPECT_GE(service.backend().batches().size(), 8u);
}

TEST(HeadRequestsTest, RerankMoreTextsThanItsLimitIsInvalid) {
  server::core::RequestLimits limits;
  limits.max_rerank_texts = 2;
  CoreService service(CoreService::DefaultConfig(), limits);
  service.SetReranker();
  absl::StatusOr<core::RerankResult> result = service.Rerank(ThreeTexts());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("--max-rerank-texts"), std::string::npos);
}

TEST(HeadRequestsTest, RerankTruncationCutsTheTextNeverTheQuery) {
  CoreService service;
  service.SetReranker();
  const engine::Tokenizer& tokenizer = *service.model().tokenizer;
  core::RerankRequest request;
  request.query = "hello world";
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "again ";
  request.texts = {long_text};
  request.truncate = true;
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  // Scored at the model's maximum: the pair was cut to fit.
  EXPECT_EQ(result->results[0].score, static_cast<float>(testing_support::TestModel::kMaxLength));
  EXPECT_EQ(result->tokens, testing_support::TestModel::kMaxLength);
  // The first ids are the whole query's, as the tokenizer makes them alone.
  absl::StatusOr<engine::Encoding> query = tokenizer.Encode("hello world", 0);
  ASSERT_TRUE(query.ok());
  absl::StatusOr<engine::Encoding> pair = tokenizer.EncodePair(
      "hello world", long_text, testing_support::TestModel::kMaxLength,
      engine::TruncationSide::kRight, true, engine::TruncationStrategy::kOnlySecond);
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_EQ(std::vector<int32_t>(pair->ids.begin(), pair->ids.begin() + query->ids.size()),
            query->ids);
  // From the left: the query whole, the text's end kept.
  request.truncation_side = engine::TruncationSide::kLeft;
  result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->tokens, testing_support::TestModel::kMaxLength);
  request.truncation_side = engine::TruncationSide::kRight;
  // Without truncation the long pair is refused, naming the text's index.
  request.truncate = false;
  result = service.Rerank(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  std::optional<core::InputError> error = core::FindInputError(result.status());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->index, 0);
  EXPECT_EQ(error->problem, core::InputProblem::kTooLong);
}

TEST(HeadRequestsTest, AQueryLeavingNoRoomForTheTextIsInvalid) {
  CoreService service;
  service.SetReranker();
  core::RerankRequest request;
  for (int i = 0; i < 100; ++i) request.query += "hello ";
  request.texts = {"world"};
  request.truncate = true;
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("query"), std::string::npos) << result.status();
}

TEST(HeadRequestsTest, RerankBadInputNamesTheFieldAndIndex) {
  CoreService service;
  service.SetReranker();
  core::RerankRequest request = ThreeTexts();
  request.texts[2].clear();
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::FindInputError(result.status())->index, 2);
  EXPECT_NE(result.status().message().find("input 2: text is empty"), std::string::npos)
      << result.status();

  request = ThreeTexts();
  request.query.clear();
  EXPECT_NE(service.Rerank(request).status().message().find("query is empty"), std::string::npos);
  request = ThreeTexts();
  request.texts.clear();
  EXPECT_EQ(service.Rerank(request).status().code(), absl::StatusCode::kInvalidArgument);
  request = ThreeTexts();
  request.top_n = 0;
  result = service.Rerank(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("top_n"), std::string::npos);
}

TEST(HeadRequestsTest, AMissingHeadIsFailedPreconditionNamingWhatTheModelServes) {
  CoreService service;  // embeddings only
  absl::StatusOr<core::RerankResult> rerank = service.Rerank(ThreeTexts());
  EXPECT_EQ(rerank.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(rerank.status().message().find("this model serves embeddings"), std::string::npos)
      << rerank.status();
  core::SparseRequest sparse;
  sparse.inputs.push_back(core::Input::Text("hello"));
  EXPECT_EQ(service.Sparse(sparse).status().code(), absl::StatusCode::kFailedPrecondition);
  core::ClassifyRequest classify;
  classify.inputs.push_back(core::Input::Text("hello"));
  EXPECT_EQ(service.Classify(classify).status().code(), absl::StatusCode::kFailedPrecondition);

  // A three-label classifier serves classify, not rerank.
  core::ModelHeads heads;
  heads.classifier = engine::ClassifierHead{3, {"neg", "neu", "pos"}, {}};
  service.SetHeads(heads);
  rerank = service.Rerank(ThreeTexts());
  EXPECT_EQ(rerank.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(rerank.status().message().find("embeddings; classify with 3 labels"), std::string::npos)
      << rerank.status();
}

TEST(HeadRequestsTest, ASparseEncoderHasNoDefaultEmbedding) {
  // A SparseEncoder's output is its sparse weights: the embedding routes'
  // default (the model's pooling) is FAILED_PRECONDITION marked as a missing
  // head (TEI's 424); a named pooling and the sparse request are served.
  CoreService service;
  core::ModelHeads heads;
  heads.sparse = true;
  heads.sparse_default = true;
  service.SetHeads(heads);
  core::EncodeRequest encode;
  encode.inputs.push_back(core::Input::Text("hello"));
  const absl::StatusOr<core::EncodeResult> by_default = service.Encode(encode);
  EXPECT_EQ(by_default.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(core::IsMissingHead(by_default.status())) << by_default.status();
  EXPECT_NE(by_default.status().message().find("SparseEncoder"), std::string::npos);
  encode.pooling = core::PoolingChoice::kMean;
  EXPECT_TRUE(service.Encode(encode).ok());
  core::SparseRequest sparse;
  sparse.inputs.push_back(core::Input::Text("hello"));
  EXPECT_TRUE(service.Sparse(sparse).ok());
}

TEST(HeadRequestsTest, ClassifyGivesEveryLabelByScore) {
  CoreService service;
  service.backend().SetNumLabels(3);
  core::ModelHeads heads;
  heads.classifier =
      engine::ClassifierHead{3, {"neg", "neu", "pos"}, engine::ScoreActivation::kIdentity};
  service.SetHeads(heads);
  core::ClassifyRequest request;
  request.inputs.push_back(core::Input::Text("hello"));
  core::Input pair;
  pair.kind = core::Input::Kind::kTextPair;
  pair.text = "hello";
  pair.text_pair = "world";
  request.inputs.push_back(pair);
  request.raw_scores = true;
  absl::StatusOr<core::ClassifyResult> result = service.Classify(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->predictions.size(), 2u);
  const auto& first = result->predictions[0];
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].label, "pos");
  EXPECT_EQ(first[0].id, 2);
  EXPECT_EQ(first[2].label, "neg");
  const float tokens = static_cast<float>(service.model().tokenizer->Encode("hello")->ids.size());
  EXPECT_EQ(first[2].score, tokens);
  // The pair has more tokens: higher logits.
  EXPECT_GT(result->predictions[1][0].score, first[0].score);

  // A pair without its second text names the input.
  pair.text_pair.clear();
  request.inputs = {core::Input::Text("hello"), pair};
  result = service.Classify(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::FindInputError(result.status())->index, 1);
  EXPECT_NE(result.status().message().find("text_pair is empty"), std::string::npos)
      << result.status();
}

TEST(HeadRequestsTest, SparseGivesEntriesWithTokens) {
  CoreService service;
  core::ModelHeads heads;
  heads.sparse = true;
  service.SetHeads(heads);
  core::SparseRequest request;
  request.inputs.push_back(core::Input::Ids({2, 11, 12, 11, 3}));
  request.max_active_dims = 2;
  request.return_tokens = true;
  absl::StatusOr<core::SparseResult> result = service.Sparse(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs.size(), 1u);
  const auto& entries = result->outputs[0];
  ASSERT_EQ(entries.size(), 2u);  // max_active_dims
  EXPECT_EQ(entries[0].id, 3);
  EXPECT_EQ(entries[0].weight, 4.0f);
  EXPECT_EQ(entries[1].id, 11);
  EXPECT_EQ(entries[1].weight, 3.0f);
  EXPECT_EQ(entries[1].token, *service.model().tokenizer->Decode({11}, false));
  EXPECT_EQ(service.backend().specs()[0].sparse.max_active_dims, 2);

  request.max_active_dims = -1;
  EXPECT_EQ(service.Sparse(request).status().code(), absl::StatusCode::kInvalidArgument);
}

// Head requests share the queue and the batches with encode requests: one
// engine call computes an embedding, a rerank pair and sparse weights.
TEST(HeadRequestsTest, HeadsBatchWithEncodeTraffic) {
  CoreService service;
  core::ModelHeads heads;
  heads.classifier = engine::ClassifierHead{1, {"score"}, engine::ScoreActivation::kIdentity};
  heads.sparse = true;
  service.SetHeads(heads);
  service.backend().Hold();
  core::EncodeRequest first;
  first.inputs.push_back(core::Input::Ids({1, 5}));
  auto held = std::make_shared<std::promise<absl::StatusOr<core::EncodeResult>>>();
  service.dispatcher().Dispatch(
      first, core::Clock::time_point::max(), {},
      [held](absl::StatusOr<core::EncodeResult> result) { held->set_value(std::move(result)); });
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  // Queued while the engine runs: an encode, a rerank and a sparse request.
  core::EncodeRequest encode;
  encode.inputs.push_back(core::Input::Ids({7, 5, 6}));
  auto encoded = std::make_shared<std::promise<absl::StatusOr<core::EncodeResult>>>();
  service.dispatcher().Dispatch(encode, core::Clock::time_point::max(), {},
                                [encoded](absl::StatusOr<core::EncodeResult> result) {
                                  encoded->set_value(std::move(result));
                                });
  std::thread rerank_caller([&] {
    core::RerankRequest rerank;
    rerank.query = "hello";
    rerank.texts = {"world"};
    EXPECT_TRUE(service.Rerank(rerank).ok());
  });
  std::thread sparse_caller([&] {
    core::SparseRequest sparse;
    sparse.inputs.push_back(core::Input::Ids({9, 11, 3}));
    EXPECT_TRUE(service.Sparse(sparse).ok());
  });
  // Both are queued once the queue holds three requests.
  for (int i = 0; i < 2000 && service.batcher().queued_requests() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(service.batcher().queued_requests(), 3);
  service.backend().Release();
  rerank_caller.join();
  sparse_caller.join();
  ASSERT_TRUE(held->get_future().get().ok());
  ASSERT_TRUE(encoded->get_future().get().ok());
  const std::vector<std::vector<int32_t>> batches = service.backend().batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1].size(), 3u);  // one engine call for the three
  std::vector<core::OutputHead> kinds;
  const std::vector<core::OutputSpec> specs = service.backend().specs();
  for (size_t i = 1; i < specs.size(); ++i) kinds.push_back(specs[i].head);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), core::OutputHead::kEmbedding), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), core::OutputHead::kClassify), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), core::OutputHead::kSparse), 1);
}

}  // namespace
}  // namespace server
