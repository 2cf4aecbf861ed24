// Batches are packed without padding; a sequence must come out the same
// whatever else shares its batch.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/encoder.h"
#include "test_models.h"

namespace engine {
namespace {

using testing::RandomSequences;

// Alone and batched, a sequence takes the same path through float32 kernels
// except for the matmul's row blocking; 1e-5 absolute allows that and
// nothing more.
constexpr float kTolerance = 1e-5f;

class BatchIsolationTest : public ::testing::TestWithParam<LayerNormPlacement> {};

TEST_P(BatchIsolationTest, SequenceAloneEqualsSequenceInBatch) {
  const std::string dir = testing::WriteTinyModel(
      std::string("isolation_") + LayerNormPlacementName(GetParam()), TinyModelSpec(GetParam()));
  auto encoder = Encoder::Load(dir, {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  const int vocab = (*encoder)->config().vocab_size;
  // Lengths cross the matmul row buckets (8, 64, 72, ...) on purpose.
  const auto sequences = RandomSequences({1, 9, 64, 3, 57, 17, 8, 33}, vocab, 11);
  std::vector<int32_t> types(17, 0);
  for (size_t i = 9; i < types.size(); ++i) types[i] = 1;

  std::vector<Sequence> batch;
  for (size_t i = 0; i < sequences.size(); ++i) {
    batch.push_back(
        {sequences[i], i == 5 ? absl::Span<const int32_t>(types) : absl::Span<const int32_t>()});
  }
  EncodeResult together;
  ASSERT_TRUE((*encoder)->Encode(batch, &together).ok());
  const int h = together.hidden_size;
  EncodeResult alone;
  for (size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE((*encoder)->Encode({batch[i]}, &alone).ok());
    ASSERT_EQ(alone.num_tokens(0), together.num_tokens(static_cast<int>(i)));
    float max_diff = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(alone.num_tokens(0)) * h; ++k) {
      max_diff = std::max(max_diff, std::abs(alone.sequence_states(0)[k] -
                                             together.sequence_states(static_cast<int>(i))[k]));
    }
    EXPECT_LE(max_diff, kTolerance) << "sequence " << i;
  }
}

// A server sharing the CPU among models runs another model's batch between
// two layers of this one's (Encode's between_layers): the pass must come out
// bit for bit as without it, and the hook see every boundary in order.
TEST_P(BatchIsolationTest, AnotherModelsPassBetweenLayersChangesNothing) {
  const auto spec = TinyModelSpec(GetParam());
  const std::string dir = testing::WriteTinyModel(
      std::string("between_layers_") + LayerNormPlacementName(GetParam()), spec);
  auto encoder = Encoder::Load(dir, {});
  auto other = Encoder::Load(dir, {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  ASSERT_TRUE(other.ok()) << other.status();
  const int vocab = (*encoder)->config().vocab_size;
  const auto sequences = RandomSequences({9, 33, 17}, vocab, 5);
  const auto other_sequences = RandomSequences({40, 3}, vocab, 6);
  std::vector<Sequence> batch, other_batch;
  for (const auto& ids : sequences) batch.push_back({ids, {}});
  for (const auto& ids : other_sequences) other_batch.push_back({ids, {}});

  EncodeResult plain;
  ASSERT_TRUE((*encoder)->Encode(batch, &plain).ok());
  std::vector<std::pair<int, int>> boundaries;
  EncodeResult interleaved, other_result;
  EncodeOptions options;
  options.between_layers = [&](int done, int layers) {
    boundaries.emplace_back(done, layers);
    ASSERT_TRUE((*other)->Encode(other_batch, &other_result).ok());
  };
  ASSERT_TRUE((*encoder)->Encode(batch, &interleaved, options).ok());
  const int layers = (*encoder)->config().num_layers;
  ASSERT_GE(layers, 2);
  std::vector<std::pair<int, int>> expected;
  for (int done = 1; done < layers; ++done) expected.emplace_back(done, layers);
  EXPECT_EQ(boundaries, expected);
  EXPECT_EQ(interleaved.offsets, plain.offsets);
  EXPECT_EQ(interleaved.hidden_states, plain.hidden_states);
}

INSTANTIATE_TEST_SUITE_P(Placements, BatchIsolationTest,
                         ::testing::Values(LayerNormPlacement::kPost, LayerNormPlacement::kPre));

TEST(EncodeTest, RejectsInvalidSequencesNamingTheIndex) {
  const std::string dir = testing::WriteTinyModel("invalid");
  auto encoder = Encoder::Load(dir, {});
  ASSERT_TRUE(encoder.ok());
  const int vocab = (*encoder)->config().vocab_size;
  std::vector<int32_t> good = {2, 10, 3};
  std::vector<int32_t> bad_id = {2, vocab, 3};
  std::vector<int32_t> negative = {2, -1, 3};
  std::vector<int32_t> too_long(65, 10);
  std::vector<int32_t> wrong_types = {0, 0};
  std::vector<int32_t> type_out_of_range = {0, 2, 0};
  EncodeResult result;
  const std::pair<Sequence, std::string> cases[] = {
      {{bad_id, {}}, "outside the vocabulary"},
      {{negative, {}}, "token id -1 at position 1"},
      {{too_long, {}}, "exceeds the model's maximum of 64"},
      {{good, wrong_types}, "2 token types for 3 tokens"},
      {{good, type_out_of_range}, "token type 2 at position 1"},
      {{{}, {}}, "empty sequence"},
  };
  for (const auto& [sequence, fragment] : cases) {
    const absl::Status s = (*encoder)->Encode({Sequence{good, {}}, sequence}, &result);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << fragment;
    EXPECT_NE(s.message().find("sequence 1: "), std::string::npos) << s;
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s;
  }
}

TEST(EncodeTest, RejectsABatchOverTheTokenBudget) {
  const std::string dir = testing::WriteTinyModel("budget");
  EncoderOptions options;
  options.max_batch_tokens = 40;
  auto encoder = Encoder::Load(dir, options);
  ASSERT_TRUE(encoder.ok());
  std::vector<int32_t> ids(30, 10);
  EncodeResult result;
  EXPECT_TRUE((*encoder)->Encode({Sequence{ids, {}}}, &result).ok());
  const absl::Status s = (*encoder)->Encode({Sequence{ids, {}}, Sequence{ids, {}}}, &result);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("exceeds the budget of 40"), std::string::npos) << s;
}

TEST(EncodeTest, PoolingOptions) {
  const std::string dir = testing::WriteTinyModel("pooling");
  auto encoder = Encoder::Load(dir, {});
  ASSERT_TRUE(encoder.ok());
  std::vector<int32_t> ids = {2, 20, 30, 40, 3};
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode({Sequence{ids, {}}}, &result).ok());
  const int h = result.hidden_size;
  std::vector<float> cls(h), mean(h), normalized(h);
  ASSERT_TRUE((*encoder)->Pool(result, 0, Pooling::kCls, false, cls.data()).ok());
  ASSERT_TRUE((*encoder)->Pool(result, 0, Pooling::kMean, false, mean.data()).ok());
  ASSERT_TRUE((*encoder)->Pool(result, 0, Pooling::kMean, true, normalized.data()).ok());
  double norm = 0;
  for (int c = 0; c < h; ++c) {
    EXPECT_EQ(cls[c], result.sequence_states(0)[c]);
    double sum = 0;
    for (int t = 0; t < 5; ++t) sum += result.sequence_states(0)[t * h + c];
    EXPECT_NEAR(mean[c], sum / 5, 1e-6);
    norm += static_cast<double>(normalized[c]) * normalized[c];
  }
  EXPECT_NEAR(norm, 1.0, 1e-6);
  EXPECT_EQ((*encoder)->Pool(result, 0, Pooling::kNone, false, cls.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*encoder)->Pool(result, 1, Pooling::kCls, false, cls.data()).code(),
            absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace engine
