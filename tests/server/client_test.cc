// encoder-client's input parsing and JSON output, without a server.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "client/chunks_command.h"
#include "client/inputs.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "support/files.h"

namespace client {
namespace {

TEST(ClientInputsTest, ParsesIds) {
  auto ids = ParseIds("101, 2023,102");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int32_t>{101, 2023, 102}));
  EXPECT_EQ(ParseIds("1,,2").status().message(), "--ids: \"\" is not a 32-bit integer");
  EXPECT_EQ(ParseIds("1,x").status().message(), "--ids: \"x\" is not a 32-bit integer");
  EXPECT_FALSE(ParseIds("99999999999").ok());
  EXPECT_EQ((*ParseIds("-5"))[0], -5);  // the server, not the client, refuses it
}

TEST(ClientInputsTest, ParsesChunkSpans) {
  auto spans = ParseChunkSpans("0:100, 100:250");
  ASSERT_TRUE(spans.ok()) << spans.status();
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((std::vector<int>{(*spans)[0].start(), (*spans)[0].end(), (*spans)[1].start(),
                              (*spans)[1].end()}),
            (std::vector<int>{0, 100, 100, 250}));
  EXPECT_EQ(ParseChunkSpans("0:100,100").status().message(),
            "--chunks: \"100\" is not START:END (code points)");
  EXPECT_FALSE(ParseChunkSpans("a:b").ok());
  EXPECT_FALSE(ParseChunkSpans("").ok());
}

TEST(ClientInputsTest, ParsesJsonLines) {
  auto text = ParseJsonInput(R"({"text": "hello"})");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->text(), "hello");
  auto pair = ParseJsonInput(R"({"text": "q", "text_pair": "a"})");
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(pair->text_pair().text(), "q");
  EXPECT_EQ(pair->text_pair().text_pair(), "a");
  auto ids = ParseJsonInput(R"({"ids": [2, 7, 3], "token_type_ids": [0, 1, 1]})");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->token_ids().ids_size(), 3);
  EXPECT_EQ(ids->token_ids().token_type_ids(2), 1);

  EXPECT_EQ(ParseJsonInput("[1]").status().message(), "not a JSON object");
  EXPECT_EQ(ParseJsonInput("{\"txt\": 1}").status().message(),
            "expected a string \"text\" or an array \"ids\"");
  EXPECT_EQ(ParseJsonInput(R"({"ids": [1, "a"]})").status().message(),
            "\"ids\" must hold integers only");
}

TEST(ClientInputsTest, CollectsTextsPairsAndIdsInOrder) {
  InputOptions options;
  options.texts = {"a", "b", "c", "d"};
  options.pair = true;
  options.ids = "2,3";
  auto inputs = CollectInputs(options);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_EQ(inputs->size(), 3u);
  EXPECT_EQ((*inputs)[1].text_pair().text(), "c");
  EXPECT_EQ((*inputs)[1].text_pair().text_pair(), "d");
  EXPECT_EQ((*inputs)[2].token_ids().ids_size(), 2);

  options.texts = {"odd", "one", "out"};
  EXPECT_EQ(CollectInputs(options).status().message(),
            "--pair takes texts two by two (text, text_pair); got 3 texts");
  options.input_file = "/nonexistent/inputs.jsonl";
  options.pair = false;
  EXPECT_EQ(CollectInputs(options).status().code(), absl::StatusCode::kNotFound);
}

TEST(ClientInputsTest, AnInputFileOrStandardInputWithoutLinesIsAnError) {
  testing_support::TempDir dir;
  InputOptions options;
  options.texts = {"a text does not excuse an empty file"};
  for (const char* contents : {"", "\n  \n\t\n"}) {
    options.input_file = dir.path() + "/empty.jsonl";
    testing_support::WriteFile(options.input_file, contents);
    EXPECT_EQ(CollectInputs(options).status().message(),
              "--input " + options.input_file +
                  " is empty: expected JSON lines such as {\"text\": \"hello\"}");
  }

  options.input_file = "-";
  std::istringstream empty_stdin("");
  std::streambuf* const real_stdin = std::cin.rdbuf(empty_stdin.rdbuf());
  const absl::Status status = CollectInputs(options).status();
  std::istringstream one_line("{\"text\": \"from stdin\"}\n");
  std::cin.rdbuf(one_line.rdbuf());
  const absl::StatusOr<std::vector<encoder::v1::Input>> read = CollectInputs(options);
  std::cin.rdbuf(real_stdin);
  EXPECT_EQ(
      status.message(),
      "--input - (standard input) is empty: expected JSON lines such as {\"text\": \"hello\"}");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].text(), "from stdin");
}

TEST(ClientInputsTest, ParsesPooling) {
  EXPECT_EQ(*ParsePooling(""), encoder::v1::POOLING_UNSPECIFIED);
  EXPECT_EQ(*ParsePooling("CLS"), encoder::v1::POOLING_CLS);
  EXPECT_EQ(*ParsePooling("mean"), encoder::v1::POOLING_MEAN);
  EXPECT_EQ(*ParsePooling("none"), encoder::v1::POOLING_NONE);
  EXPECT_EQ(*ParsePooling("pooler"), encoder::v1::POOLING_POOLER);
  EXPECT_EQ(static_cast<int>(*ParsePooling("42")), 42);  // sent as is, for the server to judge
  EXPECT_EQ(*ParsePooling("max"), encoder::v1::POOLING_MAX);
  EXPECT_EQ(*ParsePooling("mean_sqrt_len"), encoder::v1::POOLING_MEAN_SQRT_LEN);
  EXPECT_EQ(*ParsePooling("weightedmean"), encoder::v1::POOLING_WEIGHTED_MEAN);
  EXPECT_EQ(*ParsePooling("lasttoken"), encoder::v1::POOLING_LAST_TOKEN);
  EXPECT_FALSE(ParsePooling("median").ok());
}

TEST(ClientJsonTest, PrintsEmbeddingsAndTokenStates) {
  encoder::v1::Output output;
  for (float v : {0.5f, -1.25f, 3.0f, 0.1f}) output.add_values(v);
  output.set_rows(2);
  output.set_cols(2);
  output.set_tokens(2);
  EXPECT_EQ(EncodeOutputToJson(output, /*token_states=*/true),
            R"({"hidden_states": [[0.5, -1.25], [3, 0.1]], "tokens": 2})");
  output.set_rows(1);
  EXPECT_EQ(EncodeOutputToJson(output, /*token_states=*/false),
            R"({"embedding": [0.5, -1.25, 3, 0.1], "tokens": 2})");
}

TEST(ClientJsonTest, PrintsTokenizeResponses) {
  encoder::v1::TokenizeResponse response;
  response.add_ids(2);
  response.add_ids(9);
  response.add_token_type_ids(0);
  response.add_token_type_ids(0);
  response.add_tokens("[CLS]");
  response.add_tokens("\"q\"");
  response.add_offsets();
  auto* offset = response.add_offsets();
  offset->set_begin(0);
  offset->set_end(3);
  EXPECT_EQ(TokenizeResponseToJson(response),
            R"({"ids": [2, 9], "token_type_ids": [0, 0], "tokens": ["[CLS]", "\"q\""], )"
            R"("offsets": [[0, 0], [0, 3]]})");
}

TEST(ClientErrorTest, NamesTheStatusCode) {
  EXPECT_EQ(StatusCodeName(3), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(8), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(14), "UNAVAILABLE");
}

}  // namespace
}  // namespace client
