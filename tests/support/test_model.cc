#include "support/test_model.h"

#include <gtest/gtest.h>

#include "engine/tools/random_model.h"

namespace testing_support {

using server::core::Input;

TestModel::TestModel(int hidden, uint64_t seed, int max_length)
    : hidden_(hidden), max_length_(max_length), dir_("encoder_server_test_") {
  // The shared tiny model at `hidden` (FFN 128) and `max_length` positions.
  engine::RandomModelSpec spec = engine::TinyModelSpec();
  spec.config.hidden_size = hidden;
  spec.config.intermediate_size = 128;
  spec.config.max_position_embeddings = max_length;
  spec.seed = seed;
  const absl::Status written = engine::WriteRandomModel(dir(), spec);
  if (!written.ok()) {
    ADD_FAILURE() << written;
    return;
  }
  engine::EncoderOptions options;
  options.max_batch_tokens = 4096;
  auto encoder = engine::Encoder::Load(dir(), options);
  auto tokenizer = engine::Tokenizer::Load(dir());
  if (!encoder.ok() || !tokenizer.ok()) {
    ADD_FAILURE() << encoder.status() << " " << tokenizer.status();
    return;
  }
  encoder_ = *std::move(encoder);
  tokenizer_ = *std::move(tokenizer);
}

TestModel::~TestModel() = default;

void TestModel::Tokenize(const Input& input, bool truncate, std::vector<int32_t>* ids,
                         std::vector<int32_t>* types) const {
  const int cut = truncate ? max_length_ : 0;
  types->clear();
  switch (input.kind) {
    case Input::Kind::kText: {
      auto encoding = tokenizer_->Encode(input.text, cut);
      ASSERT_TRUE(encoding.ok()) << encoding.status();
      *ids = encoding->ids;
      break;
    }
    case Input::Kind::kTextPair: {
      auto encoding = tokenizer_->EncodePair(input.text, input.text_pair, cut);
      ASSERT_TRUE(encoding.ok()) << encoding.status();
      *ids = encoding->ids;
      *types = encoding->token_type_ids;
      break;
    }
    default: {
      *ids = input.ids;
      *types = input.token_type_ids;
      if (truncate && static_cast<int>(ids->size()) > max_length_) {
        const int32_t last = ids->back();
        ids->resize(max_length_);
        ids->back() = last;
        if (!types->empty()) {
          const int32_t last_type = types->back();
          types->resize(max_length_);
          types->back() = last_type;
        }
      }
    }
  }
}

std::vector<float> TestModel::EncodeAlone(const Input& input, engine::Pooling pooling,
                                          bool normalize, bool truncate, int* rows, int* tokens) {
  std::vector<int32_t> ids, types;
  Tokenize(input, truncate, &ids, &types);
  const engine::Sequence sequence{ids, types};
  engine::EncodeResult result;
  const absl::Status encoded = encoder_->Encode({&sequence, 1}, &result);
  EXPECT_TRUE(encoded.ok()) << encoded;
  if (!encoded.ok()) return {};
  *tokens = result.num_tokens(0);
  if (pooling == engine::Pooling::kNone) {
    *rows = *tokens;
    std::vector<float> states(result.sequence_states(0),
                              result.sequence_states(0) + *rows * hidden_);
    if (normalize) {
      for (int r = 0; r < *rows; ++r) engine::L2Normalize(states.data() + r * hidden_, hidden_);
    }
    return states;
  }
  *rows = 1;
  std::vector<float> pooled(hidden_);
  const absl::Status status = encoder_->Pool(result, 0, pooling, normalize, pooled.data());
  EXPECT_TRUE(status.ok()) << status;
  return pooled;
}

}  // namespace testing_support
