// The model's sentence-transformers pipeline through the gRPC server: a
// random model with modules.json (Transformer, Pooling max + mean with
// include_prompt false, Normalize) and config_sentence_transformers.json
// (prompts, default_prompt_name). Each answer is compared with engine::Embed
// run directly on what the request should have become (the default prompt
// put before the text, its tokens left out of pooling, normalization as the
// pipeline says): this tests the server's wiring; the numerics are
// tests/engine/sentence_pipeline_test.cc's.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/sentence_pipeline.h"
#include "support/test_server.h"

namespace server {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using testing_support::TestModel;

constexpr int kHidden = TestModel::kHidden;

class PipelineServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = model_.dir();
    std::ofstream(dir + "/modules.json")
        << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
              {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
              {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])";
    std::filesystem::create_directories(dir + "/1_Pooling");
    std::ofstream(dir + "/1_Pooling/config.json")
        << R"({"word_embedding_dimension": 64, "pooling_mode_mean_tokens": true,
               "pooling_mode_max_tokens": true, "include_prompt": false})";
    std::ofstream(dir + "/config_sentence_transformers.json")
        << R"({"prompts": {"query": "hello ", "passage": ""}, "default_prompt_name": "query"})";
    server_ = testing_support::StartServer(testing_support::TestServerConfig(dir));
    ASSERT_NE(server_, nullptr);
    stub_ = encoder::v1::Encoder::NewStub(testing_support::Connect(server_->port()));
    absl::StatusOr<engine::SentencePipeline> pipeline = engine::ReadSentencePipeline(dir);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    pipeline_ = *std::move(pipeline);
  }

  grpc::Status Encode(const EncodeRequest& request, EncodeResponse* response) {
    return testing_support::Encode(*stub_, request, response);
  }

  // `text` as the server should embed it: tokenized with `prompt` before it,
  // the prompt's [CLS] + tokens left out of pooling.
  std::vector<float> Expected(const std::string& text, const std::string& prompt,
                              engine::EmbeddingOptions options) {
    const std::vector<int32_t> ids = model_.tokenizer().Encode(prompt + text).value().ids;
    options.skip_tokens =
        prompt.empty() ? 0
                       : static_cast<int>(model_.tokenizer().Encode(prompt).value().ids.size()) - 1;
    const engine::Sequence sequence{ids, {}};
    engine::EncodeResult result;
    EXPECT_TRUE(model_.encoder().Encode({&sequence, 1}, &result).ok());
    std::vector<float> out;
    EXPECT_TRUE(engine::Embed(pipeline_, model_.encoder(), result, 0, options, &out).ok());
    return out;
  }

  static void ExpectNear(const encoder::v1::Output& output, const std::vector<float>& expected) {
    ASSERT_EQ(output.cols(), static_cast<int>(expected.size()));
    ASSERT_EQ(output.values_size(), static_cast<int>(expected.size()));
    for (int k = 0; k < output.values_size(); ++k) {
      ASSERT_NEAR(output.values(k), expected[static_cast<size_t>(k)], 1e-5) << "value " << k;
    }
  }

  static double Norm(const encoder::v1::Output& output) {
    double sum = 0.0;
    for (float v : output.values()) sum += static_cast<double>(v) * v;
    return std::sqrt(sum);
  }

  TestModel model_;
  std::unique_ptr<EncoderServer> server_;
  std::unique_ptr<encoder::v1::Encoder::Stub> stub_;
  engine::SentencePipeline pipeline_;
};

TEST_F(PipelineServerTest, ModelInfoReportsThePipeline) {
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::ModelInfo info;
  ASSERT_TRUE(stub_->GetModelInfo(&context, {}, &info).ok());
  ASSERT_EQ(info.pooling_modes_size(), 2);
  EXPECT_EQ(info.pooling_modes(0), encoder::v1::POOLING_MAX);
  EXPECT_EQ(info.pooling_modes(1), encoder::v1::POOLING_MEAN);
  EXPECT_EQ(info.default_pooling(), encoder::v1::POOLING_MAX);
  EXPECT_EQ(info.embedding_size(), 2 * kHidden);
  EXPECT_TRUE(info.normalize());
  EXPECT_FALSE(info.include_prompt());
  EXPECT_EQ(info.prompts().at("query"), "hello ");
  EXPECT_EQ(info.default_prompt_name(), "query");
}

TEST_F(PipelineServerTest, DefaultsFollowThePipeline) {
  EncodeRequest request;
  request.add_inputs()->set_text("world");
  EncodeResponse response;
  ASSERT_TRUE(Encode(request, &response).ok());
  ASSERT_EQ(response.outputs_size(), 1);
  engine::EmbeddingOptions options;
  options.normalize = true;
  ExpectNear(response.outputs(0), Expected("world", "hello ", options));
  EXPECT_NEAR(Norm(response.outputs(0)), 1.0, 1e-5);

  // normalize_output false: the same vector before normalization.
  request.set_normalize_output(false);
  ASSERT_TRUE(Encode(request, &response).ok());
  options.normalize = false;
  ExpectNear(response.outputs(0), Expected("world", "hello ", options));
  EXPECT_GT(std::abs(Norm(response.outputs(0)) - 1.0), 1e-3);

  // The old field keeps its meaning: true normalizes; with normalize_output false it contradicts.
  request.set_normalize(true);
  const grpc::Status contradiction = Encode(request, &response);
  EXPECT_EQ(contradiction.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_normalize_output();
  ASSERT_TRUE(Encode(request, &response).ok());
  EXPECT_NEAR(Norm(response.outputs(0)), 1.0, 1e-5);
}

TEST_F(PipelineServerTest, PromptNameAndLiteralPrompt) {
  EncodeRequest request;
  request.add_inputs()->set_text("world");
  request.set_prompt_name("passage");  // an empty prompt: nothing left out
  EncodeResponse response;
  ASSERT_TRUE(Encode(request, &response).ok());
  engine::EmbeddingOptions options;
  options.normalize = true;
  ExpectNear(response.outputs(0), Expected("world", "", options));

  request.clear_prompt_name();
  request.set_prompt("world ");
  ASSERT_TRUE(Encode(request, &response).ok());
  ExpectNear(response.outputs(0), Expected("world", "world ", options));

  request.set_prompt_name("query");
  EXPECT_EQ(Encode(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_prompt();
  request.set_prompt_name("document");
  const grpc::Status unknown = Encode(request, &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknown.error_message().find("document"), std::string::npos);

  // Token ids get no default prompt.
  EncodeRequest ids;
  ids.add_inputs()->mutable_token_ids()->add_ids(2);
  ids.mutable_inputs(0)->mutable_token_ids()->add_ids(3);
  ASSERT_TRUE(Encode(ids, &response).ok());
  EXPECT_EQ(response.outputs(0).tokens(), 2);
}

TEST_F(PipelineServerTest, DimensionsCutBeforeNormalizing) {
  EncodeRequest request;
  request.add_inputs()->set_text("world");
  request.set_dimensions(16);
  EncodeResponse response;
  ASSERT_TRUE(Encode(request, &response).ok());
  engine::EmbeddingOptions options;
  options.normalize = true;
  options.dimensions = 16;
  ExpectNear(response.outputs(0), Expected("world", "hello ", options));
  EXPECT_EQ(response.outputs(0).cols(), 16);
  EXPECT_NEAR(Norm(response.outputs(0)), 1.0, 1e-5);

  for (int bad : {-1, 2 * kHidden + 1}) {
    request.set_dimensions(bad);
    const grpc::Status status = Encode(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_NE(status.error_message().find("dimensions"), std::string::npos)
        << status.error_message();
  }
  // An explicit pooling has the hidden size.
  request.set_pooling(encoder::v1::POOLING_MEAN);
  request.set_dimensions(kHidden + 1);
  EXPECT_EQ(Encode(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_pooling(encoder::v1::POOLING_NONE);
  request.set_dimensions(4);
  EXPECT_EQ(Encode(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(PipelineServerTest, ExplicitPoolingModes) {
  EncodeRequest request;
  request.add_inputs()->set_text("world");
  EncodeResponse response;
  for (auto [proto, mode] :
       {std::pair{encoder::v1::POOLING_MAX, engine::Pooling::kMax},
        std::pair{encoder::v1::POOLING_MEAN_SQRT_LEN, engine::Pooling::kMeanSqrtLen},
        std::pair{encoder::v1::POOLING_WEIGHTED_MEAN, engine::Pooling::kWeightedMean},
        std::pair{encoder::v1::POOLING_LAST_TOKEN, engine::Pooling::kLastToken}}) {
    request.set_pooling(proto);
    ASSERT_TRUE(Encode(request, &response).ok());
    EXPECT_EQ(response.pooling(), proto);
    engine::EmbeddingOptions options;
    options.pooling = {mode};
    options.normalize = true;  // the pipeline's Normalize still applies
    ExpectNear(response.outputs(0), Expected("world", "hello ", options));
  }
}

}  // namespace
}  // namespace server
