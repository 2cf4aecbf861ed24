// Late chunking in the core (server/core/requests/late_chunking.h): window planning,
// the stitching rule, code point offsets, chunk validation and splitting,
// the plan for a small-max-length model, and the dispatcher's refusals. The
// expected values are written out by hand from the documented rules; the
// numbers themselves are checked against PyTorch in late_chunking_server_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "server/core/model/model_loader.h"
#include "server/core/requests/late_chunking.h"
#include "support/core_service.h"
#include "support/test_model.h"

namespace server::core::chunking {
namespace late_chunking_test {

using ::testing::HasSubstr;
using testing_support::CoreService;
using testing_support::TestModel;

std::vector<std::vector<int>> Ranges(const std::vector<Window>& windows, bool owned) {
  std::vector<std::vector<int>> out;
  for (const Window& window : windows) {
    const TokenRange& range = owned ? window.owned : window.tokens;
    out.push_back({range.begin, range.end});
  }
  return out;
}

TEST(LateChunkingWindowsTest, ATextThatFitsIsOneWindow) {
  absl::StatusOr<std::vector<Window>> windows = PlanWindows(14, 14, std::nullopt);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(Ranges(*windows, false), (std::vector<std::vector<int>>{{0, 14}}));
  EXPECT_EQ(Ranges(*windows, true), (std::vector<std::vector<int>>{{0, 14}}));
}

TEST(LateChunkingWindowsTest, DefaultOverlapIsAQuarterAndTheEarlierWindowKeepsTheRoundedUpHalf) {
  // 40 tokens, 14 a window: overlap 14 / 4 = 3, stride 11. Of the 3 shared
  // tokens the first 2 stay with the earlier window.
  absl::StatusOr<std::vector<Window>> windows = PlanWindows(40, 14, std::nullopt);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(Ranges(*windows, false),
            (std::vector<std::vector<int>>{{0, 14}, {11, 25}, {22, 36}, {33, 40}}));
  EXPECT_EQ(Ranges(*windows, true),
            (std::vector<std::vector<int>>{{0, 13}, {13, 24}, {24, 35}, {35, 40}}));
}

TEST(LateChunkingWindowsTest, AnEvenOverlapSplitsInHalves) {
  absl::StatusOr<std::vector<Window>> windows = PlanWindows(40, 14, 4);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(Ranges(*windows, false),
            (std::vector<std::vector<int>>{{0, 14}, {10, 24}, {20, 34}, {30, 40}}));
  EXPECT_EQ(Ranges(*windows, true),
            (std::vector<std::vector<int>>{{0, 12}, {12, 22}, {22, 32}, {32, 40}}));
}

TEST(LateChunkingWindowsTest, NoOverlapAndOneTokenPastAWindow) {
  absl::StatusOr<std::vector<Window>> windows = PlanWindows(40, 14, 0);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(Ranges(*windows, false), (std::vector<std::vector<int>>{{0, 14}, {14, 28}, {28, 40}}));
  EXPECT_EQ(Ranges(*windows, true), (std::vector<std::vector<int>>{{0, 14}, {14, 28}, {28, 40}}));
  windows = PlanWindows(15, 14, 3);
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(Ranges(*windows, false), (std::vector<std::vector<int>>{{0, 14}, {11, 15}}));
  EXPECT_EQ(Ranges(*windows, true), (std::vector<std::vector<int>>{{0, 13}, {13, 15}}));
}

TEST(LateChunkingWindowsTest, AnOverlapOfAWholeWindowOrNegativeIsRefused) {
  for (int overlap : {14, 15, -1}) {
    absl::StatusOr<std::vector<Window>> windows = PlanWindows(40, 14, overlap);
    EXPECT_EQ(windows.status().code(), absl::StatusCode::kInvalidArgument) << overlap;
    EXPECT_THAT(windows.status().message(), HasSubstr("window_overlap")) << overlap;
  }
  EXPECT_EQ(PlanWindows(40, 0, std::nullopt).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LateChunkingStitchTest, EachTokenTakesItsOwningWindowsState) {
  // 40 tokens, windows of 14 with overlap 3 (see above), one special token
  // before and one after the text's in each window. Window k's row r holds
  // the state {k, r}: the stitched state says which window and row it came from.
  absl::StatusOr<std::vector<Window>> windows = PlanWindows(40, 14, 3);
  ASSERT_TRUE(windows.ok()) << windows.status();
  std::vector<core::InputOutput> outputs;
  for (size_t k = 0; k < windows->size(); ++k) {
    core::InputOutput out;
    out.rows = (*windows)[k].tokens.size() + 2;
    out.cols = 2;
    out.tokens = out.rows;
    for (int r = 0; r < out.rows; ++r) {
      out.values.push_back(static_cast<float>(k));
      out.values.push_back(static_cast<float>(r));
    }
    outputs.push_back(out);
  }
  absl::StatusOr<std::vector<float>> states = StitchStates(*windows, outputs, 1, 2, 40);
  ASSERT_TRUE(states.ok()) << states.status();
  ASSERT_EQ(states->size(), 80u);
  // Owners by hand: 0..12 window 0, 13..23 window 1 (starts at 11), 24..34
  // window 2 (starts at 22), 35..39 window 3 (starts at 33); row = 1 + t - start.
  for (int t = 0; t < 40; ++t) {
    const int owner = t < 13 ? 0 : t < 24 ? 1 : t < 35 ? 2 : 3;
    const int start = owner * 11;
    EXPECT_EQ((*states)[2 * t], owner) << t;
    EXPECT_EQ((*states)[2 * t + 1], 1 + t - start) << t;
  }
  // A window's output of the wrong shape is an internal error, not a crash.
  outputs[1].rows = 3;
  outputs[1].values.resize(6);
  EXPECT_EQ(StitchStates(*windows, outputs, 1, 2, 40).status().code(), absl::StatusCode::kInternal);
}

TEST(LateChunkingOffsetsTest, ByteOffsetsBecomeCodePoints) {
  // "añb 日本 x": a(0) ñ(1-2) b(3) ' '(4) 日(5-7) 本(8-10) ' '(11) x(12).
  const std::string text =
      "a\xC3\xB1"
      "b \xE6\x97\xA5\xE6\x9C\xAC x";
  EXPECT_EQ(CodePointLength(text), 8);
  const std::vector<core::ChunkSpan> spans =
      CodePointSpans(text, {{0, 4}, {5, 8}, {8, 11}, {12, 13}, {2, 3}, {0, 2}});
  ASSERT_EQ(spans.size(), 6u);
  // A start inside ñ (byte 2) is ñ's; an end inside it (byte 2) is after it.
  const std::vector<std::vector<int>> expected = {{0, 3}, {4, 5}, {5, 6}, {7, 8}, {1, 2}, {0, 2}};
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ((std::vector<int>{spans[i].start, spans[i].end}), expected[i]) << i;
  }
}

TEST(LateChunkingSpansTest, ATokenBelongsToTheChunkHoldingItsFirstCharacter) {
  // Tokens at [0,3) [4,7) [8,11) [12,15) of a 16-code-point text.
  const std::vector<core::ChunkSpan> tokens = {{0, 3}, {4, 7}, {8, 11}, {12, 15}};
  absl::StatusOr<std::vector<TokenRange>> ranges =
      TokensOfSpans({{0, 5}, {5, 9}, {12, 16}}, tokens, 16);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  ASSERT_EQ(ranges->size(), 3u);
  // [0,5): tokens 0, 1 (starts 0, 4); [5,9): token 2 (start 8; token 1
  // started before 5); [12,16): token 3.
  EXPECT_EQ((std::vector<int>{(*ranges)[0].begin, (*ranges)[0].end}), (std::vector<int>{0, 2}));
  EXPECT_EQ((std::vector<int>{(*ranges)[1].begin, (*ranges)[1].end}), (std::vector<int>{2, 3}));
  EXPECT_EQ((std::vector<int>{(*ranges)[2].begin, (*ranges)[2].end}), (std::vector<int>{3, 4}));
}

TEST(LateChunkingSpansTest, BadSpansAreRefusedNamingTheChunk) {
  const std::vector<core::ChunkSpan> tokens = {{0, 3}, {4, 7}, {8, 11}, {12, 15}};
  const struct {
    std::vector<core::ChunkSpan> chunks;
    const char* says;
  } cases[] = {
      {{{0, 4}, {4, 17}}, "chunks[1]: end 17 is past the text's end (16 code points)"},
      {{{0, 4}, {6, 6}}, "chunks[1]: [6, 6) is empty"},
      {{{3, 2}}, "chunks[0]: [3, 2) is empty"},
      {{{-1, 2}}, "chunks[0]: start -1 is negative"},
      {{{0, 8}, {4, 12}}, "chunks[1]: start 4 is before chunks[0]'s end 8"},
      {{{4, 8}, {0, 2}}, "chunks[1]: start 0 is before chunks[0]'s end 8"},
      // Only the blank between two tokens.
      {{{0, 4}, {11, 12}}, "chunks[1]: [11, 12) holds no token"},
      // Inside token 1 but not at its start.
      {{{5, 7}}, "chunks[0]: [5, 7) holds no token"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<TokenRange>> ranges = TokensOfSpans(c.chunks, tokens, 16);
    EXPECT_EQ(ranges.status().code(), absl::StatusCode::kInvalidArgument) << c.says;
    EXPECT_THAT(ranges.status().message(), HasSubstr(c.says));
  }
}

TEST(LateChunkingSpansTest, ChunkTokensSplitsConsecutivelyTheLastShorter) {
  const std::vector<TokenRange> ranges = SplitTokens(10, 4);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ((std::vector<int>{ranges[0].begin, ranges[0].end, ranges[1].begin, ranges[1].end,
                              ranges[2].begin, ranges[2].end}),
            (std::vector<int>{0, 4, 4, 8, 8, 10}));
  EXPECT_EQ(SplitTokens(3, 5).size(), 1u);
}

// A model of max length 16: 14 text tokens a window beside [CLS] and [SEP].
class LateChunkingPlanTest : public ::testing::Test {
 protected:
  LateChunkingPlanTest() : model_(TestModel::kHidden, 7, 16) {
    engine::EncoderOptions options;
    options.threads = 1;
    absl::StatusOr<core::LoadedModel> loaded = core::LoadModel(model_.dir(), options);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (loaded.ok()) loaded_ = *std::move(loaded);
  }

  // 40 one-letter words (each one token of the demo vocabulary): "a b c ... n a b ...".
  static std::string Letters(int count) {
    std::string text;
    for (int i = 0; i < count; ++i) {
      if (i > 0) text += ' ';
      text += static_cast<char>('a' + i % 14);
    }
    return text;
  }

  TestModel model_;
  core::LoadedModel loaded_;
};

TEST_F(LateChunkingPlanTest, ALongTextRunsAsWindowsWrappedInTheSpecialTokens) {
  ASSERT_NE(loaded_.tokenizer, nullptr);
  core::ChunksRequest request;
  request.text = Letters(40);
  request.chunk_tokens = 15;
  std::vector<core::TokenizedInput> inputs;
  absl::StatusOr<ChunkPlan> plan =
      PlanChunks(core::InputTokenizer(&loaded_, core::RequestLimits()), request, &inputs);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->text_tokens, 40);
  EXPECT_EQ(plan->leading_specials, 1);
  EXPECT_EQ(Ranges(plan->windows, false),
            (std::vector<std::vector<int>>{{0, 14}, {11, 25}, {22, 36}, {33, 40}}));
  absl::StatusOr<engine::Encoding> bare =
      loaded_.tokenizer->Encode(request.text, 0, engine::TruncationSide::kRight, false);
  ASSERT_TRUE(bare.ok()) << bare.status();
  ASSERT_EQ(inputs.size(), 4u);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TokenRange& tokens = plan->windows[k].tokens;
    std::vector<int32_t> expected = {loaded_.tokenizer->cls_id()};
    expected.insert(expected.end(), bare->ids.begin() + tokens.begin,
                    bare->ids.begin() + tokens.end);
    expected.push_back(loaded_.tokenizer->sep_id());
    EXPECT_EQ(inputs[k].ids, expected) << k;
    EXPECT_LE(static_cast<int>(inputs[k].ids.size()), 16);
  }
  // chunk_tokens 15 of 40: 15, 15, 10; letter i is at code point 2i.
  ASSERT_EQ(plan->spans.size(), 3u);
  EXPECT_EQ((std::vector<int>{plan->spans[0].start, plan->spans[0].end, plan->spans[1].start,
                              plan->spans[1].end, plan->spans[2].start, plan->spans[2].end}),
            (std::vector<int>{0, 29, 30, 59, 60, 79}));
  // Mean pooling, no Dense (the test model has no pipeline files).
  EXPECT_EQ(plan->options.pooling, (std::vector<engine::Pooling>{engine::Pooling::kMean}));
  EXPECT_FALSE(plan->options.apply_dense);
}

TEST_F(LateChunkingPlanTest, ATextThatFitsIsOneSequenceAndExplicitSpansMapToTokens) {
  core::ChunksRequest request;
  request.text = Letters(14);  // "a b c ... n": 27 code points
  request.chunks = {{0, 4}, {4, 27}};
  request.window_overlap = 5;
  std::vector<core::TokenizedInput> inputs;
  absl::StatusOr<ChunkPlan> plan =
      PlanChunks(core::InputTokenizer(&loaded_, core::RequestLimits()), request, &inputs);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].ids.size(), 16u);
  ASSERT_EQ(plan->chunks.size(), 2u);
  // [0,4) holds "a" (0) and "b" (2); [4,27) "c" (4) to "n" (26).
  EXPECT_EQ((std::vector<int>{plan->chunks[0].begin, plan->chunks[0].end, plan->chunks[1].begin,
                              plan->chunks[1].end}),
            (std::vector<int>{0, 2, 2, 14}));
}

TEST_F(LateChunkingPlanTest, TheRequestsOwnMistakesAreInvalidArgument) {
  const struct {
    std::function<void(core::ChunksRequest&)> edit;
    const char* says;
  } cases[] = {
      {[](core::ChunksRequest& r) { r.chunk_tokens = 0; }, "send either chunks"},
      {[](core::ChunksRequest& r) {
         r.chunks = {{0, 1}};
       },
       "exclusive"},
      {[](core::ChunksRequest& r) { r.chunk_tokens = -3; }, "chunk_tokens is -3"},
      {[](core::ChunksRequest& r) { r.window_overlap = 14; }, "window_overlap is 14"},
      {[](core::ChunksRequest& r) { r.dimensions = TestModel::kHidden + 1; }, "dimensions"},
      {[](core::ChunksRequest& r) { r.text.clear(); }, "text is empty"},
      {[](core::ChunksRequest& r) { r.text = "   "; }, "text holds no token"},
      {[](core::ChunksRequest& r) { r.text = "a\xFF"; }, "not valid UTF-8"},
  };
  for (const auto& c : cases) {
    core::ChunksRequest request;
    request.text = Letters(40);
    request.chunk_tokens = 5;
    c.edit(request);
    std::vector<core::TokenizedInput> inputs;
    absl::StatusOr<ChunkPlan> plan =
        PlanChunks(core::InputTokenizer(&loaded_, core::RequestLimits()), request, &inputs);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << c.says;
    EXPECT_THAT(plan.status().message(), HasSubstr(c.says));
  }
  // The windows' tokens count against --max-tokens-per-request.
  core::RequestLimits limits;
  limits.max_tokens_per_request = 40;
  core::ChunksRequest request;
  request.text = Letters(40);
  request.chunk_tokens = 5;
  std::vector<core::TokenizedInput> inputs;
  EXPECT_THAT(
      PlanChunks(core::InputTokenizer(&loaded_, limits), request, &inputs).status().message(),
      HasSubstr("--max-tokens-per-request"));
}

TEST(LateChunkingDispatchTest, RefusalsAreAnsweredAtOnceNamingTheChunk) {
  CoreService service;
  core::ChunksRequest request;
  request.text = "hello world";  // 11 code points
  request.chunks = {{0, 5}, {6, 12}};
  std::promise<absl::StatusOr<core::ChunksResult>> answered;
  service.dispatcher().DispatchChunks(request, core::Clock::time_point::max(), {},
                                      [&answered](absl::StatusOr<core::ChunksResult> result) {
                                        answered.set_value(std::move(result));
                                      });
  absl::StatusOr<core::ChunksResult> result = answered.get_future().get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("chunks[1]: end 12 is past the text's end"));
  EXPECT_TRUE(service.backend().batches().empty());
}

}  // namespace late_chunking_test
}  // namespace server::core::chunking
