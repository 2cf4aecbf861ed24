#include "test_model.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "engine/random_model.h"

namespace server {

TestModel::TestModel() {
  std::string pattern = ::testing::TempDir() + "encoder_server_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return;
  }
  dir_ = pattern;
  engine::RandomModelSpec spec;
  spec.config.hidden_size = kHidden;
  spec.config.num_layers = 2;
  spec.config.num_heads = 4;
  spec.config.intermediate_size = 128;
  spec.config.max_position_embeddings = kMaxLength;
  spec.seed = 7;
  const absl::Status written = engine::WriteRandomModel(dir_, spec);
  if (!written.ok()) {
    ADD_FAILURE() << written;
    return;
  }
  engine::EncoderOptions options;
  options.max_batch_tokens = 4096;
  auto encoder = engine::Encoder::Load(dir_, options);
  auto tokenizer = engine::Tokenizer::Load(dir_);
  if (!encoder.ok() || !tokenizer.ok()) {
    ADD_FAILURE() << encoder.status() << " " << tokenizer.status();
    return;
  }
  encoder_ = *std::move(encoder);
  tokenizer_ = *std::move(tokenizer);
}

TestModel::~TestModel() {
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

void TestModel::Tokenize(const encoder::v1::Input& input, bool truncate, std::vector<int32_t>* ids,
                         std::vector<int32_t>* types) const {
  const int cut = truncate ? kMaxLength : 0;
  types->clear();
  switch (input.kind_case()) {
    case encoder::v1::Input::kText: {
      auto encoding = tokenizer_->Encode(input.text(), cut);
      ASSERT_TRUE(encoding.ok()) << encoding.status();
      *ids = encoding->ids;
      break;
    }
    case encoder::v1::Input::kTextPair: {
      auto encoding =
          tokenizer_->EncodePair(input.text_pair().text(), input.text_pair().text_pair(), cut);
      ASSERT_TRUE(encoding.ok()) << encoding.status();
      *ids = encoding->ids;
      *types = encoding->token_type_ids;
      break;
    }
    default: {
      ids->assign(input.token_ids().ids().begin(), input.token_ids().ids().end());
      types->assign(input.token_ids().token_type_ids().begin(),
                    input.token_ids().token_type_ids().end());
      if (truncate && static_cast<int>(ids->size()) > kMaxLength) {
        const int32_t last = ids->back();
        ids->resize(kMaxLength);
        ids->back() = last;
        if (!types->empty()) {
          const int32_t last_type = types->back();
          types->resize(kMaxLength);
          types->back() = last_type;
        }
      }
    }
  }
}

std::vector<float> TestModel::EncodeAlone(const encoder::v1::Input& input, engine::Pooling pooling,
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
                              result.sequence_states(0) + *rows * kHidden);
    if (normalize) {
      for (int r = 0; r < *rows; ++r) engine::L2Normalize(states.data() + r * kHidden, kHidden);
    }
    return states;
  }
  *rows = 1;
  std::vector<float> pooled(kHidden);
  const absl::Status status = encoder_->Pool(result, 0, pooling, normalize, pooled.data());
  EXPECT_TRUE(status.ok()) << status;
  return pooled;
}

}  // namespace server
