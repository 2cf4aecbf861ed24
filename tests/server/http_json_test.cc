// The HTTP adapter's JSON mapping and error shapes, without sockets: what each
// API's request becomes in the core's types, what is refused and how, and the
// response bodies. Expected values are written out by hand (base64 bytes
// from the IEEE 754 encodings, Matryoshka cuts of 3-4-5 triangles).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "server/http/http_errors.h"
#include "server/http/json_mapping.h"

namespace server::http {
namespace {

using nlohmann::json;

constexpr int kHidden = 8;

TEST(OpenAiParseTest, TakesEveryInputShape) {
  auto one = ParseOpenAiEmbeddings(R"({"input": "hello", "model": "m"})", kHidden);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->request.inputs.size(), 1u);
  EXPECT_EQ(one->request.inputs[0].kind, core::Input::Kind::kText);
  EXPECT_EQ(one->request.inputs[0].text, "hello");
  EXPECT_TRUE(one->request.normalize);  // OpenAI's vectors are unit length
  EXPECT_EQ(one->model, "m");
  EXPECT_FALSE(one->base64);
  EXPECT_EQ(one->dimensions, 0);

  auto texts = ParseOpenAiEmbeddings(R"({"input": ["a", "b"], "user": "u"})", kHidden);
  ASSERT_TRUE(texts.ok()) << texts.status();
  ASSERT_EQ(texts->request.inputs.size(), 2u);
  EXPECT_EQ(texts->request.inputs[1].text, "b");

  auto ids = ParseOpenAiEmbeddings(R"({"input": [101, 7, 102]})", kHidden);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_EQ(ids->request.inputs.size(), 1u);
  EXPECT_EQ(ids->request.inputs[0].kind, core::Input::Kind::kTokenIds);
  EXPECT_EQ(ids->request.inputs[0].ids, (std::vector<int32_t>{101, 7, 102}));

  auto id_lists = ParseOpenAiEmbeddings(
      R"({"input": [[1, 2], [3]], "encoding_format": "base64", "dimensions": 4})", kHidden);
  ASSERT_TRUE(id_lists.ok()) << id_lists.status();
  ASSERT_EQ(id_lists->request.inputs.size(), 2u);
  EXPECT_EQ(id_lists->request.inputs[1].ids, (std::vector<int32_t>{3}));
  EXPECT_TRUE(id_lists->base64);
  EXPECT_EQ(id_lists->dimensions, 4);
}

TEST(OpenAiParseTest, RefusesWithTheFieldAndIndex) {
  const auto message = [](const char* body) {
    auto call = ParseOpenAiEmbeddings(body, kHidden);
    EXPECT_FALSE(call.ok()) << body;
    if (call.ok()) return std::string();
    EXPECT_EQ(call.status().code(), absl::StatusCode::kInvalidArgument) << body;
    return std::string(call.status().message());
  };
  EXPECT_EQ(message("{\"input\": \"x\""), "the body is not valid JSON");
  EXPECT_EQ(message("[1]"), "the body must be a JSON object");
  EXPECT_EQ(message("{}"), "\"input\" is missing");
  EXPECT_EQ(message(R"({"input": []})"), "\"input\" is empty");
  EXPECT_EQ(message(R"({"input": ["a", 3]})"),
            "input 1: input[1] must be a string or an array of token ids");
  EXPECT_EQ(message(R"({"input": [[1], [2, "x"]]})"),
            "input[1][1] is not a token id (a 32-bit integer)");
  EXPECT_EQ(message(R"({"input": [1, 4294967296]})"),
            "input[1] is not a token id (a 32-bit integer)");
  EXPECT_EQ(message(R"({"input": "a", "encoding_format": "int8"})"),
            "\"encoding_format\" must be \"float\" or \"base64\"");
  EXPECT_EQ(message(R"({"input": "a", "dimensions": 9})"),
            "\"dimensions\" must be an integer from 1 to 8 (the model's size)");
  EXPECT_EQ(message(R"({"input": "a", "dimensions": 0})"),
            "\"dimensions\" must be an integer from 1 to 8 (the model's size)");
  EXPECT_EQ(message(R"({"input": "a", "model": 3})"), "\"model\" must be a string");
  EXPECT_EQ(message(R"({"input": {"text": "a"}})").rfind("\"input\" must be a string", 0), 0u);
}

TEST(TeiParseTest, DefaultsAndRefusals) {
  auto call = ParseTeiEmbed(R"({"inputs": ["a", "b"]})", kHidden);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->request.normalize);  // TEI's default
  EXPECT_FALSE(call->request.truncate);
  auto options = ParseTeiEmbed(
      R"({"inputs": "a", "normalize": false, "truncate": true, "truncation_direction": "Right",
          "prompt_name": null, "dimensions": 2})",
      kHidden);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_FALSE(options->request.normalize);
  EXPECT_TRUE(options->request.truncate);
  EXPECT_EQ(options->request.truncation_side, engine::TruncationSide::kRight);
  EXPECT_TRUE(options->request.prompt_name.empty());
  EXPECT_EQ(options->dimensions, 2);
  auto left = ParseTeiEmbed(
      R"({"inputs": "a", "truncate": true, "truncation_direction": "Left", "prompt_name": "query"})",
      kHidden);
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->request.truncation_side, engine::TruncationSide::kLeft);
  EXPECT_EQ(left->request.prompt_name, "query");  // the core checks the name

  for (const char* body : {R"({"inputs": "a", "truncation_direction": "Middle"})",
                           R"({"inputs": "a", "prompt_name": 3})",
                           R"({"inputs": "a", "normalize": "yes"})", R"({"input": "a"})"}) {
    auto refused = ParseTeiEmbed(body, kHidden);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << body;
  }

  auto tokenize = ParseTeiTokenize(R"({"inputs": ["a b", "c"]})");
  ASSERT_TRUE(tokenize.ok()) << tokenize.status();
  ASSERT_EQ(tokenize->size(), 2u);
  EXPECT_EQ((*tokenize)[0].text, "a b");
  EXPECT_FALSE(ParseTeiTokenize(R"({"inputs": ["a", 1]})").ok());
  EXPECT_FALSE(ParseTeiTokenize(R"({"inputs": "a", "add_special_tokens": false})").ok());
}

TEST(TeiParseTest, DecodeTakesOneListOrMany) {
  bool batched = true;
  auto one = ParseTeiDecode(R"({"ids": [0, 5, 2]})", &batched);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(batched);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].ids, (std::vector<int32_t>{0, 5, 2}));
  EXPECT_TRUE((*one)[0].skip_special_tokens);
  auto many = ParseTeiDecode(R"({"ids": [[1], [2, 3]], "skip_special_tokens": false})", &batched);
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_TRUE(batched);
  ASSERT_EQ(many->size(), 2u);
  EXPECT_FALSE((*many)[1].skip_special_tokens);
  for (const char* bad :
       {R"({})", R"({"ids": []})", R"({"ids": "1 2"})", R"({"ids": [1, -2]})",
        R"({"ids": [[1], [2.5]]})", R"({"ids": [1], "skip_special_tokens": 1})"}) {
    EXPECT_EQ(ParseTeiDecode(bad, &batched).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_TRUE(
      absl::StrContains(ParseTeiDecode(R"({"ids": [[1], [2, 3.5]]})", &batched).status().message(),
                        "input 1: id at position 1"));
}

TEST(VectorsTest, MatryoshkaAndBase64) {
  // 3-4-5: the first two of (3, 4, 12) re-normalized are (0.6, 0.8).
  const std::vector<float> cut = Matryoshka({3, 4, 12}, 2);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_FLOAT_EQ(cut[0], 0.6f);
  EXPECT_FLOAT_EQ(cut[1], 0.8f);
  EXPECT_EQ(Matryoshka({3, 4, 12}, 0), (std::vector<float>{3, 4, 12}));
  EXPECT_EQ(Matryoshka({3, 4, 12}, 3), (std::vector<float>{3, 4, 12}));
  // 1.0f = 0x3F800000, -2.0f = 0xC0000000, little-endian: 00 00 80 3F 00 00 00 C0.
  EXPECT_EQ(Base64Floats({1.0f, -2.0f}), "AACAPwAAAMA=");
  EXPECT_EQ(Base64Floats({}), "");
}

TEST(RenderTest, OpenAiAndTeiShapes) {
  core::EncodeResult result;
  result.outputs.push_back(InputOutput{1, 3, 5, {3, 4, 12}});
  result.outputs.push_back(InputOutput{1, 3, 2, {1, 0, 0}});
  EmbeddingsCall call;
  call.dimensions = 2;
  const json openai = json::parse(RenderOpenAiEmbeddings(result, call, "minilm"));
  EXPECT_EQ(openai["object"], "list");
  EXPECT_EQ(openai["model"], "minilm");
  EXPECT_EQ(openai["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(openai["usage"]["total_tokens"], 7);
  ASSERT_EQ(openai["data"].size(), 2u);
  EXPECT_EQ(openai["data"][1]["object"], "embedding");
  EXPECT_EQ(openai["data"][1]["index"], 1);
  EXPECT_FLOAT_EQ(openai["data"][0]["embedding"][1].get<float>(), 0.8f);
  EXPECT_EQ(openai["data"][1]["embedding"], json::parse("[1.0, 0.0]"));

  call.dimensions = 0;
  call.base64 = true;
  result.outputs = {InputOutput{1, 2, 1, {1.0f, -2.0f}}};
  EXPECT_EQ(json::parse(RenderOpenAiEmbeddings(result, call, "m"))["data"][0]["embedding"],
            "AACAPwAAAMA=");
  EXPECT_EQ(json::parse(RenderTeiEmbed(result, call)), json::parse("[[1.0, -2.0]]"));

  engine::Encoding encoding;
  encoding.ids = {101, 7592, 102};
  encoding.tokens = {"[CLS]", "hello", "[SEP]"};
  encoding.offsets = {{0, 0}, {0, 5}, {0, 0}};
  EXPECT_EQ(
      json::parse(RenderTeiTokenize({encoding})),
      json::parse(R"([[{"id": 101, "text": "[CLS]", "special": true, "start": null, "stop": null},
                             {"id": 7592, "text": "hello", "special": false, "start": 0, "stop": 5},
                             {"id": 102, "text": "[SEP]", "special": true, "start": null, "stop": null}]])"));
}

TEST(HttpErrorsTest, StatusesAndBodiesPerApi) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kOpenAi), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kTei), 422);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted, Api::kTei), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable, Api::kOpenAi), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded, Api::kOpenAi), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated, Api::kTei), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDataLoss, Api::kTei), 500);

  const json openai = json::parse(
      ErrorBody(absl::InvalidArgumentError("input 2: text is empty"), 400, Api::kOpenAi));
  EXPECT_EQ(openai, json::parse(R"({"error": {"message": "input 2: text is empty",
                                   "type": "invalid_request_error", "code": "INVALID_ARGUMENT"}})"));
  const json tei =
      json::parse(ErrorBody(absl::ResourceExhaustedError("queue full"), 429, Api::kTei));
  EXPECT_EQ(tei, json::parse(R"({"error": "queue full", "error_type": "overloaded"})"));
  EXPECT_EQ(json::parse(ErrorBody(absl::UnauthenticatedError("no key"), 401,
                                  Api::kOpenAi))["error"]["code"],
            "invalid_api_key");
}

}  // namespace
}  // namespace server::http
