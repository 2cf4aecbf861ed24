// The server's small parts on their own: UTF-8 checking, the model's default
// pooling, the environment-variable rule for flags, status mapping and the
// request's conversion from protobuf.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "engine/sentence_pipeline.h"
#include "server/app/command_line.h"
#include "server/app/server_config.h"
#include "server/core/api/input_error.h"
#include "server/core/api/utf8.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/status_mapping.h"
#include "support/files.h"

ABSL_FLAG(int, test_port, 1, "a flag for the environment-override test");
ABSL_FLAG(std::string, test_model_dir, "", "a flag for the environment-override test");

namespace server {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  size_t offset = 99;
  EXPECT_TRUE(core::IsValidUtf8("", &offset));
  EXPECT_TRUE(core::IsValidUtf8("plain ascii", &offset));
  EXPECT_TRUE(core::IsValidUtf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", &offset));
  EXPECT_TRUE(core::IsValidUtf8("\xf4\x8f\xbf\xbf", &offset));  // U+10FFFF, the last code point
  EXPECT_EQ(offset, 99u);
}

TEST(Utf8Test, FindsTheFirstBadByte) {
  const struct {
    std::string text;
    size_t offset;
  } cases[] = {
      {"ab\xff", 2},            // never valid
      {"a\xc3\x28", 1},         // bad continuation
      {"\xc0\xaf", 0},          // overlong '/'
      {"\xe0\x80\xaf", 0},      // overlong, three bytes
      {"ok\xed\xa0\x80", 2},    // a surrogate, U+D800
      {"\xf4\x90\x80\x80", 0},  // past U+10FFFF
      {"abc\xe6\x97", 3},       // cut short at the end
      {"x\x80", 1},             // a lone continuation byte
  };
  for (const auto& c : cases) {
    size_t offset = 99;
    EXPECT_FALSE(core::IsValidUtf8(c.text, &offset)) << c.offset;
    EXPECT_EQ(offset, c.offset);
  }
}

// The fallback of the model's pipeline without modules.json
// (engine/sentence_pipeline.h; its own tests are in tests/engine): what the
// server read from 1_Pooling and config_sentence_transformers.json before.
class PoolingConfigTest : public ::testing::Test {
 protected:
  void WritePoolingConfig(const std::string& json) {
    std::filesystem::create_directories(dir_ + "/1_Pooling");
    std::ofstream(dir_ + "/1_Pooling/config.json") << json;
  }
  absl::StatusOr<std::vector<engine::Pooling>> ReadDefaultPooling() const {
    absl::StatusOr<engine::SentencePipeline> pipeline = engine::ReadSentencePipeline(dir_);
    if (!pipeline.ok()) return pipeline.status();
    return pipeline->pooling;
  }
  absl::StatusOr<std::map<std::string, std::string>> ReadPrompts() const {
    absl::StatusOr<engine::SentencePipeline> pipeline = engine::ReadSentencePipeline(dir_);
    if (!pipeline.ok()) return pipeline.status();
    return pipeline->prompts;
  }
  const testing_support::TempDir temp_{"pooling_config_"};  // removed after each test
  const std::string dir_ = temp_.path();
};

using Modes = std::vector<engine::Pooling>;

TEST_F(PoolingConfigTest, IsClsWithoutTheFile) {
  auto pooling = ReadDefaultPooling();
  ASSERT_TRUE(pooling.ok());
  EXPECT_EQ(*pooling, Modes{engine::Pooling::kCls});
}

TEST_F(PoolingConfigTest, ReadsEveryMode) {
  WritePoolingConfig(R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
                         "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false})");
  EXPECT_EQ(*ReadDefaultPooling(), Modes{engine::Pooling::kMean});
  WritePoolingConfig(R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})");
  EXPECT_EQ(*ReadDefaultPooling(), Modes{engine::Pooling::kCls});
  WritePoolingConfig(R"({"pooling_mode_max_tokens": true, "pooling_mode_mean_tokens": false})");
  EXPECT_EQ(*ReadDefaultPooling(), Modes{engine::Pooling::kMax});
  WritePoolingConfig(R"({"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true})");
  EXPECT_EQ(*ReadDefaultPooling(), (Modes{engine::Pooling::kCls, engine::Pooling::kMean}));
}

TEST_F(PoolingConfigTest, RefusesWhatItCannotDo) {
  WritePoolingConfig(R"({"pooling_mode_median_tokens": true})");
  auto median = ReadDefaultPooling();
  EXPECT_EQ(median.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(median.status().message().find("pooling_mode_median_tokens"), absl::string_view::npos);
  WritePoolingConfig(R"({"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": false})");
  EXPECT_FALSE(ReadDefaultPooling().ok());
  WritePoolingConfig("not json");
  EXPECT_EQ(ReadDefaultPooling().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PoolingConfigTest, PromptsComeFromTheSentenceTransformersConfig) {
  auto none = ReadPrompts();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  // As intfloat/multilingual-e5-* and BAAI/bge-m3 ship it.
  std::ofstream(dir_ + "/config_sentence_transformers.json")
      << R"({"__version__": {"sentence_transformers": "3.0.0"},
             "prompts": {"query": "query: ", "passage": "passage: "},
             "default_prompt_name": null, "similarity_fn_name": "cosine"})";
  auto prompts = ReadPrompts();
  ASSERT_TRUE(prompts.ok()) << prompts.status();
  EXPECT_EQ(*prompts,
            (std::map<std::string, std::string>{{"passage", "passage: "}, {"query", "query: "}}));

  std::ofstream(dir_ + "/config_sentence_transformers.json") << R"({"prompts": {"query": 1}})";
  auto bad = ReadPrompts();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("config_sentence_transformers.json: prompt \"query\""),
            absl::string_view::npos)
      << bad.status();
  std::ofstream(dir_ + "/config_sentence_transformers.json") << "[1]";
  EXPECT_EQ(ReadPrompts().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CommandLineTest, NamesTheEnvironmentVariableOfAFlag) {
  EXPECT_EQ(EnvironmentVariableFor("model"), "ENCODER_MODEL");
  EXPECT_EQ(EnvironmentVariableFor("max_batch_tokens"), "ENCODER_MAX_BATCH_TOKENS");
  EXPECT_EQ(EnvironmentVariableFor("shutdown-grace"), "ENCODER_SHUTDOWN_GRACE");
}

TEST(CommandLineTest, RewritesDashesInFlagNamesOnly) {
  const char* argv[] = {"encoder-server", "--max-batch-tokens=8", "--model", "my-model", "--",
                        "--not-a-flag"};
  const std::vector<std::string> args = NormalizeFlagNames(6, const_cast<char**>(argv));
  EXPECT_EQ(args, (std::vector<std::string>{"encoder-server", "--max_batch_tokens=8", "--model",
                                            "my-model", "--", "--not-a-flag"}));
}

TEST(CommandLineTest, TheEnvironmentSetsFlagsAndBadValuesAreNamed) {
  setenv("ENCODER_TEST_PORT", "6006", 1);
  setenv("ENCODER_TEST_MODEL_DIR", "/models/x", 1);
  ASSERT_TRUE(ApplyEnvironmentOverrides({"test_port", "test_model_dir"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_port), 6006);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_model_dir), "/models/x");

  setenv("ENCODER_TEST_PORT", "many", 1);
  const absl::Status bad = ApplyEnvironmentOverrides({"test_port"});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("ENCODER_TEST_PORT=\"many\" is not a valid --test_port"),
            absl::string_view::npos)
      << bad;
  unsetenv("ENCODER_TEST_PORT");
  unsetenv("ENCODER_TEST_MODEL_DIR");
}

TEST(ModelFlagTest, OneDirOrNamedEntries) {
  ServerConfig config;
  ASSERT_TRUE(ParseModelFlag("/models/minilm", &config).ok());
  EXPECT_EQ(config.model_dir, "/models/minilm");
  EXPECT_TRUE(config.models.empty());
  EXPECT_EQ(ServedModelSpecs(config).size(), 1u);

  ASSERT_TRUE(ParseModelFlag("small=/models/minilm,large=/models/bge", &config).ok());
  EXPECT_TRUE(config.model_dir.empty());
  ASSERT_EQ(config.models.size(), 2u);
  EXPECT_EQ(config.models[1].name, "large");
  EXPECT_EQ(config.models[1].dir, "/models/bge");
  EXPECT_TRUE(ValidateServerConfig(config).ok());
  // One named model is served under its name.
  ASSERT_TRUE(ParseModelFlag("e5=/models/e5", &config).ok());
  ASSERT_EQ(ServedModelSpecs(config).size(), 1u);
  EXPECT_EQ(ServedModelSpecs(config)[0].name, "e5");

  EXPECT_FALSE(ParseModelFlag("a=/x,/y", &config).ok());
  EXPECT_FALSE(ParseModelFlag("=/x", &config).ok());
  ASSERT_TRUE(ParseModelFlag("a=/x,a=/y", &config).ok());
  EXPECT_NE(ValidateServerConfig(config).message().find("used twice"), std::string::npos);
  ASSERT_TRUE(ParseModelFlag("a=/x,b=/y", &config).ok());
  config.served_model_name = "n";
  EXPECT_NE(ValidateServerConfig(config).message().find("--served-model-name"), std::string::npos);
}

TEST(StatusMappingTest, KeepsCodeAndMessage) {
  const grpc::Status status = ToGrpcStatus(absl::ResourceExhaustedError("queue full"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), "queue full");
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::DeadlineExceededError("late")).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  const encoder::v1::Error error = ToProtoError(absl::InvalidArgumentError("input 2: bad"));
  EXPECT_EQ(error.code(), 3);
  EXPECT_EQ(error.message(), "input 2: bad");
}

// An input too long for the model: gRPC's message names gRPC's option.
TEST(StatusMappingTest, TooLongNamesTheTruncateOption) {
  const absl::Status too_long = core::WithInputIndex(
      0, core::WithInputProblem(core::InputProblem::kTooLong,
                                absl::InvalidArgumentError("text is 72 tokens long, more than the "
                                                           "model's maximum of 64")));
  const std::string expected =
      "input 0: text is 72 tokens long, more than the model's maximum of 64 (set the request's "
      "truncate option to cut it)";
  EXPECT_EQ(ToGrpcStatus(too_long).error_message(), expected);
  EXPECT_EQ(ToProtoError(too_long).message(), expected);
}

// truncate is optional: unset leaves truncation to --auto-truncate, an
// explicit false asks for the too-long error.
TEST(ProtoConversionsTest, AnUnsetTruncateLeavesItToTheServer) {
  encoder::v1::EncodeRequest request;
  request.add_inputs()->set_text("a");
  absl::StatusOr<core::EncodeRequest> unset = ToCore(request);
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_FALSE(unset->truncate.has_value());
  request.set_truncate(false);
  absl::StatusOr<core::EncodeRequest> refuse = ToCore(request);
  ASSERT_TRUE(refuse.ok()) << refuse.status();
  EXPECT_EQ(refuse->truncate, std::optional<bool>(false));
  request.set_truncate(true);
  request.set_truncation_direction(encoder::v1::TRUNCATION_DIRECTION_LEFT);
  absl::StatusOr<core::EncodeRequest> set = ToCore(request);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->truncate, std::optional<bool>(true));
  EXPECT_EQ(set->truncation_side, engine::TruncationSide::kLeft);
}

}  // namespace
}  // namespace server
