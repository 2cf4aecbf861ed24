// Window mode (server/core/requests/long_inputs.h) through the service core on
// FakeBackend (an embedding output is {first id, token count}; a rerank
// score is the pair's token count): the windows, their weights (owned
// tokens), the pooled vector, the best window of a rerank text, the limits,
// and the default (truncation) unchanged. TestModel: max length 64, BERT
// specials ([CLS] ... [SEP]: 62 text tokens per window, overlap 62 / 4 = 15).
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "server/core/requests/long_inputs.h"
#include "support/core_service.h"

namespace server {
namespace {

using testing_support::CoreService;

std::string Words(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += i == 0 ? "hello" : " hello";
  return text;
}

core::EncodeRequest Long(int words, std::optional<core::LongInput> mode) {
  core::EncodeRequest request;
  request.inputs = {core::Input::Text(Words(words)), core::Input::Text("hello")};
  request.pooling = core::PoolingChoice::kMean;
  request.normalize = false;
  request.long_input = mode;
  return request;
}

TEST(LongInputsTest, TextIsOneTokenPerWord) {
  CoreService service;
  EXPECT_EQ(service.model().tokenizer->Encode(Words(100), 0).value().ids.size(), 102u);
}

// 100 text tokens, W 62, O 15, stride 47: windows [0, 62) and [47, 100), of
// 64 and 55 tokens with [CLS] [SEP]; owned: [0, 55) and [55, 100) (the
// earlier keeps ceil(15 / 2) = 8 of the shared 15): weights 55 and 45.
TEST(LongInputsTest, EmbeddingIsTheOwnedTokenWeightedMeanOfItsWindows) {
  CoreService service;
  absl::StatusOr<core::EncodeResult> result = service.Encode(Long(100, core::LongInput::kWindow));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs.size(), 2u);
  EXPECT_EQ(result->windows, (std::vector<int>{2, 1}));
  const core::InputOutput& pooled = result->outputs[0];
  ASSERT_EQ(pooled.values.size(), 2u);
  EXPECT_FLOAT_EQ(pooled.values[1], (55.0f * 64 + 45.0f * 55) / 100);  // 59.95
  EXPECT_EQ(pooled.tokens, 64 + 55);
  EXPECT_EQ(result->outputs[1].values[1], 3.0f);  // "hello" fits: itself
  EXPECT_EQ(result->outputs[1].tokens, 3);
}

TEST(LongInputsTest, DefaultStillTruncatesAndReportsNoWindows) {
  CoreService service;
  absl::StatusOr<core::EncodeResult> result = service.Encode(Long(100, std::nullopt));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->windows.empty());
  EXPECT_EQ(result->outputs[0].tokens, 64);
}

TEST(LongInputsTest, ServerDefaultWindowAndRequestTruncateWins) {
  core::RequestLimits limits;
  limits.long_inputs = core::LongInput::kWindow;
  limits.window_overlap_tokens = 2;  // stride 60: [0, 62), [60, 100)
  CoreService service(CoreService::DefaultConfig(), limits);
  absl::StatusOr<core::EncodeResult> result = service.Encode(Long(100, std::nullopt));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->windows, (std::vector<int>{2, 1}));
  // Owned: [0, 61) and [61, 100): 61 and 39; windows of 64 and 42 tokens.
  EXPECT_FLOAT_EQ(result->outputs[0].values[1], (61.0f * 64 + 39.0f * 42) / 100);
  core::EncodeRequest cut = Long(100, std::nullopt);
  cut.truncate = true;
  result = service.Encode(cut);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->windows.empty());
  cut.truncate = false;
  EXPECT_EQ(service.Encode(cut).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LongInputsTest, WindowsCountAgainstTheRequestLimits) {
  core::RequestLimits limits;
  limits.max_tokens_per_request = 100;
  CoreService service(CoreService::DefaultConfig(), limits);
  absl::StatusOr<core::EncodeResult> result = service.Encode(Long(100, core::LongInput::kWindow));
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("input 0: the request reaches 119 tokens here (this "
                                           "input runs as 2 windows)"),
            std::string::npos)
      << result.status();
  limits.max_tokens_per_request = 1000;
  limits.max_inputs_per_request = 2;
  CoreService few_inputs(CoreService::DefaultConfig(), limits);
  result = few_inputs.Encode(Long(100, core::LongInput::kWindow));
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("input 1: the request's inputs run as 3 windows"),
            std::string::npos)
      << result.status();
}

TEST(LongInputsTest, PoolingNoneIsRefusedInWindowMode) {
  CoreService service;
  core::EncodeRequest request = Long(100, core::LongInput::kWindow);
  request.pooling = core::PoolingChoice::kNone;
  EXPECT_EQ(service.Encode(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LongInputsTest, PoolWindowsCutsThenNormalizesAfterPooling) {
  core::long_inputs::WindowPlan plan;
  plan.inputs = {{0, {3, 1}}};
  plan.dimensions = 2;
  plan.normalize = true;
  std::vector<core::InputOutput> outputs(2);
  outputs[0].values = {1, 0, 2};
  outputs[1].values = {5, 4, 2};
  std::vector<int> windows;
  absl::StatusOr<std::vector<core::InputOutput>> pooled =
      core::long_inputs::PoolWindows(plan, outputs, &windows);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  // (3 * {1, 0, 2} + {5, 4, 2}) / 4 = {2, 1, 2}; first 2: {2, 1}; L2: / sqrt(5).
  ASSERT_EQ((*pooled)[0].values.size(), 2u);
  EXPECT_FLOAT_EQ((*pooled)[0].values[0], 2.0f / std::sqrt(5.0f));
  EXPECT_FLOAT_EQ((*pooled)[0].values[1], 1.0f / std::sqrt(5.0f));
  EXPECT_EQ(windows, std::vector<int>{2});
  plan.inputs = {{1, {1, 1}}};  // past the outputs
  EXPECT_EQ(core::long_inputs::PoolWindows(plan, outputs, &windows).status().code(),
            absl::StatusCode::kInternal);
}

// (query "hello", text of 100 tokens): 3 pair specials + 1 query token leave
// W = 60, O = 15, stride 45: windows [0, 60) and [45, 100), pairs of 64 and
// 59 tokens; FakeBackend's score is the token count: the best is 64.
TEST(LongInputsTest, RerankScoresATooLongTextByItsBestWindow) {
  CoreService service;
  service.SetReranker();
  core::RerankRequest request;
  request.query = "hello";
  request.texts = {Words(100), "hello hello"};
  request.long_input = core::LongInput::kWindow;
  absl::StatusOr<core::RerankResult> result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->results.size(), 2u);
  EXPECT_EQ(result->results[0].index, 0);
  EXPECT_EQ(result->results[0].score, 64.0f);
  EXPECT_EQ(result->results[0].windows, 2);
  EXPECT_EQ(result->results[1].score, 6.0f);
  EXPECT_EQ(result->results[1].windows, 1);
  EXPECT_EQ(result->tokens, 64 + 59 + 6);
  // Default: truncated to one pair of 64, no windows reported.
  request.long_input.reset();
  result = service.Rerank(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->results[0].windows, 0);
  EXPECT_EQ(result->tokens, 64 + 6);
  // Windows count as texts against --max-rerank-texts.
  core::RequestLimits limits;
  limits.max_rerank_texts = 2;
  CoreService few(CoreService::DefaultConfig(), limits);
  few.SetReranker();
  request.long_input = core::LongInput::kWindow;
  absl::StatusOr<core::RerankResult> refused = few.Rerank(request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("3 (query, window) pairs"), std::string::npos)
      << refused.status();
}

TEST(LongInputsTest, BestWindowsTakesTheGreatestLogit) {
  std::vector<core::InputOutput> outputs(3);
  outputs[0].values = {-1.0f};
  outputs[1].values = {2.5f};
  outputs[2].values = {0.5f};
  for (core::InputOutput& out : outputs) out.tokens = 10;
  absl::StatusOr<std::vector<core::InputOutput>> best =
      core::long_inputs::BestWindows({2, 1}, outputs);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ((*best)[0].values[0], 2.5f);
  EXPECT_EQ((*best)[0].tokens, 20);
  EXPECT_EQ((*best)[1].values[0], 0.5f);
  EXPECT_EQ(core::long_inputs::BestWindows({2, 2}, outputs).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace server
