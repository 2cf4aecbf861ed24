// The HTTP adapter's JSON mapping and error shapes, without sockets: what each
// API's request becomes in the core's types, what is refused and how, and the
// response bodies. Expected values are written out by hand (base64 bytes
// from the IEEE 754 encodings, Matryoshka cuts of 3-4-5 triangles).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"
#include "server/http/http_errors.h"
#include "server/http/json_mapping.h"

namespace server::http {
namespace {

using nlohmann::json;

constexpr int kHidden = 8;

// The "error" object of `status` answered on OpenAI's routes with 400.
json OpenAiError(const absl::Status& status, int http_status = 400) {
  return json::parse(ErrorBody(status, http_status, Api::kOpenAi))["error"];
}

TEST(OpenAiParseTest, TakesEveryInputShape) {
  auto one = ParseOpenAiEmbeddings(R"({"input": "hello", "model": "m"})", kHidden);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->request.inputs.size(), 1u);
  EXPECT_EQ(one->request.inputs[0].kind, core::Input::Kind::kText);
  EXPECT_EQ(one->request.inputs[0].text, "hello");
  EXPECT_EQ(one->request.normalize, true);  // OpenAI's vectors are unit length
  EXPECT_EQ(one->model, "m");
  EXPECT_FALSE(one->base64);
  EXPECT_EQ(one->dimensions, 0);
  EXPECT_FALSE(one->input_is_list);
  EXPECT_FALSE(one->request.truncate.has_value());  // the server's --auto-truncate decides

  auto texts = ParseOpenAiEmbeddings(R"({"input": ["a", "b"], "user": "u"})", kHidden);
  ASSERT_TRUE(texts.ok()) << texts.status();
  ASSERT_EQ(texts->request.inputs.size(), 2u);
  EXPECT_EQ(texts->request.inputs[1].text, "b");
  EXPECT_TRUE(texts->input_is_list);

  auto ids = ParseOpenAiEmbeddings(R"({"input": [101, 7, 102]})", kHidden);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_EQ(ids->request.inputs.size(), 1u);
  EXPECT_EQ(ids->request.inputs[0].kind, core::Input::Kind::kTokenIds);
  EXPECT_EQ(ids->request.inputs[0].ids, (std::vector<int32_t>{101, 7, 102}));
  EXPECT_FALSE(ids->input_is_list);  // one input of ids

  auto id_lists = ParseOpenAiEmbeddings(
      R"({"input": [[1, 2], [3]], "encoding_format": "base64", "dimensions": 4})", kHidden);
  ASSERT_TRUE(id_lists.ok()) << id_lists.status();
  ASSERT_EQ(id_lists->request.inputs.size(), 2u);
  EXPECT_EQ(id_lists->request.inputs[1].ids, (std::vector<int32_t>{3}));
  EXPECT_TRUE(id_lists->base64);
  EXPECT_EQ(id_lists->dimensions, 4);
}

// Each refusal: its message (one naming of the field, no "input N:" prefix
// before "input[N]"), and OpenAI's param and code for it.
TEST(OpenAiParseTest, RefusesWithTheFieldItsParamAndCode) {
  struct Case {
    const char* body;
    const char* message;
    json param;
    json code;
  };
  const Case cases[] = {
      {"{}", "\"input\" is missing", "input", "missing_required_parameter"},
      {R"({"input": []})", "\"input\" is empty", "input", "invalid_value"},
      {R"({"input": ["a", 3]})", "input[1] must be a string or an array of token ids, not number",
       "input[1]", "invalid_type"},
      {R"({"input": [[1], [2, "x"]]})", "input[1][1] is not a token id (a 32-bit integer)",
       "input[1][1]", "invalid_value"},
      {R"({"input": [1, 4294967296]})", "input[1] is not a token id (a 32-bit integer)", "input[1]",
       "invalid_value"},
      {R"({"input": {"text": "a"}})",
       "\"input\" must be a string, an array of strings, an array of token ids or an array of "
       "arrays of token ids, not object",
       "input", "invalid_type"},
      {R"({"input": "a", "encoding_format": "int8"})",
       "\"encoding_format\" must be \"float\" or \"base64\"", "encoding_format", "invalid_value"},
      {R"({"input": "a", "dimensions": 9})",
       "\"dimensions\" must be an integer from 1 to 8 (the model's size)", "dimensions",
       "invalid_value"},
      {R"({"input": "a", "dimensions": 0})",
       "\"dimensions\" must be an integer from 1 to 8 (the model's size)", "dimensions",
       "invalid_value"},
      {R"({"input": "a", "dimensions": "4"})",
       "\"dimensions\" must be an integer from 1 to 8 (the model's size)", "dimensions",
       "invalid_type"},
      {R"({"input": "a", "model": 3})", "\"model\" must be a string", "model", "invalid_type"},
      {R"({"input": "a", "truncate": "yes"})", "\"truncate\" must be true or false", "truncate",
       "invalid_type"},
      {R"({"input": "a", "truncation_direction": "Middle"})",
       "\"truncation_direction\" must be \"Right\" or \"Left\"", "truncation_direction",
       "invalid_value"},
      // The body as a whole: no param, and no code (as OpenAI answers).
      {"[1]", "the body must be a JSON object, not array", nullptr, nullptr},
      {" \r\n", "the body is empty: send a JSON object", nullptr, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    auto call = ParseOpenAiEmbeddings(c.body, kHidden);
    ASSERT_FALSE(call.ok());
    EXPECT_EQ(call.status().code(), absl::StatusCode::kInvalidArgument);
    const json error = OpenAiError(call.status());
    EXPECT_EQ(error["message"], c.message);
    EXPECT_EQ(error["type"], "invalid_request_error");
    EXPECT_EQ(error["param"], c.param);
    EXPECT_EQ(error["code"], c.code);
  }
}

// nlohmann's position (line, column, byte) and what it expected there, once.
TEST(OpenAiParseTest, InvalidJsonSaysWhereAndWhatWasExpected) {
  const auto message = [](const char* body) {
    return std::string(ParseOpenAiEmbeddings(body, kHidden).status().message());
  };
  // Positions count from 1; the end of a 13-byte body is position 14.
  EXPECT_EQ(message(R"({"input": "x")"),
            "the body is not valid JSON at line 1, column 14 (byte 14): syntax error while "
            "parsing object - unexpected end of input; expected '}'");
  // Line 3 is " 2,,]": the second comma is its 4th byte, the body's 21st
  // (20 bytes before it: "{\n" 2, "  \"input\": [1,\n" 15, " 2," 3).
  EXPECT_EQ(message("{\n  \"input\": [1,\n 2,,]\n}"),
            "the body is not valid JSON at line 3, column 4 (byte 21): syntax error while parsing "
            "value - unexpected ','; expected '[', '{', or a literal");
  // A number beyond a double's range is nlohmann's out_of_range, not a
  // parse_error: still a bad body (it once escaped as an exception).
  for (const char* body : {"111e1111111055555555555", R"({"input": [1e999]})"}) {
    EXPECT_THAT(message(body), ::testing::StartsWith("the body is not valid JSON: ")) << body;
    EXPECT_THAT(message(body), ::testing::HasSubstr("number overflow")) << body;
    EXPECT_FALSE(ParseTeiEmbed(body, kHidden).ok());
    EXPECT_FALSE(ParseTeiTokenize(body).ok());
  }
}

TEST(OpenAiParseTest, TakesTeiTruncationAsAnExtension) {
  auto call = ParseOpenAiEmbeddings(
      R"({"input": "a", "truncate": true, "truncation_direction": "left"})", kHidden);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->request.truncate, std::optional<bool>(true));
  EXPECT_EQ(call->request.truncation_side, engine::TruncationSide::kLeft);
  call = ParseOpenAiEmbeddings(R"({"input": "a", "truncate": false})", kHidden);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->request.truncate, std::optional<bool>(false));
  EXPECT_EQ(call->request.truncation_side, engine::TruncationSide::kRight);
}

TEST(TeiParseTest, DefaultsAndRefusals) {
  auto call = ParseTeiEmbed(R"({"inputs": ["a", "b"]})", kHidden);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->request.normalize, true);          // TEI's default
  EXPECT_FALSE(call->request.truncate.has_value());  // the server's --auto-truncate decides
  auto options = ParseTeiEmbed(
      R"({"inputs": "a", "normalize": false, "truncate": true, "truncation_direction": "Right",
          "prompt_name": null, "dimensions": 2})",
      kHidden);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->request.normalize, false);
  EXPECT_EQ(options->request.truncate, std::optional<bool>(true));
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
  EXPECT_TRUE((*tokenize)[1].add_special_tokens);
  EXPECT_EQ(ParseTeiTokenize(R"({"inputs": ["a", 1]})").status().message(),
            "inputs[1] must be a string");
  auto bare = ParseTeiTokenize(R"({"inputs": ["a", "b"], "add_special_tokens": false})");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_FALSE((*bare)[0].add_special_tokens);
  EXPECT_FALSE((*bare)[1].add_special_tokens);
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
  EXPECT_EQ(ParseTeiDecode(R"({"ids": [[1], [2, 3.5]]})", &batched).status().message(),
            "ids[1][1] must be a non-negative 32-bit integer");
  EXPECT_EQ(ParseTeiDecode(R"({"ids": [1, -2]})", &batched).status().message(),
            "ids[1] must be a non-negative 32-bit integer");
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
  result.outputs.push_back(core::InputOutput{1, 3, 5, {3, 4, 12}, {}, 0, 0, {}});
  result.outputs.push_back(core::InputOutput{1, 3, 2, {1, 0, 0}, {}, 0, 0, {}});
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
  result.outputs = {core::InputOutput{1, 2, 1, {1.0f, -2.0f}, {}, 0, 0, {}}};
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

TEST(RenderTest, OpenAiModels) {
  const json model = json::parse(R"({"id": "BAAI/bge-m3", "object": "model", "created": 0,
                                     "owned_by": "encoder-server"})");
  EXPECT_EQ(json::parse(RenderOpenAiModels({"BAAI/bge-m3"})),
            json({{"object", "list"}, {"data", json::array({model})}}));
  absl::StatusOr<std::string> found = RenderOpenAiModel("BAAI/bge-m3", {"BAAI/bge-m3"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(json::parse(*found), model);
  absl::StatusOr<std::string> other = RenderOpenAiModel("bge-m3", {"BAAI/bge-m3"});
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      OpenAiError(other.status(), 404),
      json({{"message", "The model 'bge-m3' does not exist: this server serves 'BAAI/bge-m3'"},
            {"type", "invalid_request_error"},
            {"param", "model"},
            {"code", "model_not_found"}}));
}

TEST(HttpErrorsTest, StatusesPerApi) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kOpenAi), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kTei), 422);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted, Api::kTei), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable, Api::kOpenAi), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded, Api::kOpenAi), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated, Api::kTei), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound, Api::kOpenAi), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDataLoss, Api::kTei), 500);
  // TEI answers an empty input with 400 (its "Empty"), other bad input with 422.
  const absl::Status empty =
      core::WithInputIndex(1, core::WithInputProblem(core::InputProblem::kEmpty,
                                                     absl::InvalidArgumentError("text is empty")));
  EXPECT_EQ(HttpStatusFor(empty, Api::kTei), 400);
  EXPECT_EQ(HttpStatusFor(empty, Api::kOpenAi), 400);
  EXPECT_EQ(HttpStatusFor(absl::InvalidArgumentError("bad"), Api::kTei), 422);
}

// Cohere's routes answer Cohere's {"message"} (docs.cohere.com/reference/errors),
// a bad request 400 and a head the model lacks 424 (as TEI); the server's
// own routes (kNone) answer TEI's shape and statuses.
TEST(HttpErrorsTest, CohereAndNoFamily) {
  absl::Status missing_head =
      absl::FailedPreconditionError("rerank needs a cross-encoder; this model serves embeddings");
  missing_head.SetPayload(core::kMissingHeadPayload, absl::Cord("embeddings"));
  EXPECT_EQ(HttpStatusFor(missing_head, Api::kCohere), 424);
  EXPECT_EQ(HttpStatusFor(missing_head, Api::kTei), 424);
  EXPECT_EQ(HttpStatusFor(missing_head, Api::kOpenAi), 400);
  EXPECT_EQ(json::parse(ErrorBody(missing_head, 424, Api::kCohere)),
            json({{"message", "rerank needs a cross-encoder; this model serves embeddings"}}));
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kCohere), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kFailedPrecondition, Api::kCohere), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated, Api::kCohere), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted, Api::kCohere), 429);
  EXPECT_EQ(json::parse(ErrorBody(absl::ResourceExhaustedError("queue full"), 429, Api::kCohere)),
            json({{"message", "queue full"}}));
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument, Api::kNone), 422);
  EXPECT_EQ(json::parse(ErrorBody(absl::UnavailableError("stopping"), 503, Api::kNone)),
            json::parse(R"({"error": "stopping", "error_type": "Unhealthy"})"));
}

// TEI's ErrorType spelled as TEI serializes it; never "Backend" for a
// client's mistake.
TEST(HttpErrorsTest, TeiErrorTypes) {
  const auto type = [](const absl::Status& status, int http_status) {
    return json::parse(ErrorBody(status, http_status, Api::kTei))["error_type"];
  };
  const absl::Status empty = core::WithInputProblem(core::InputProblem::kEmpty,
                                                    absl::InvalidArgumentError("text is empty"));
  EXPECT_EQ(type(empty, 400), "Empty");
  EXPECT_EQ(type(absl::InvalidArgumentError("bad"), 422), "Validation");
  EXPECT_EQ(type(absl::FailedPreconditionError("no tokenizer"), 422), "Tokenizer");
  EXPECT_EQ(type(absl::NotFoundError("no route"), 404), "Validation");
  EXPECT_EQ(type(absl::InvalidArgumentError("GET is not allowed"), 405), "Validation");
  EXPECT_EQ(type(absl::UnauthenticatedError("no key"), 401), "Validation");
  EXPECT_EQ(type(absl::InvalidArgumentError("too big"), 413), "Validation");
  EXPECT_EQ(type(absl::ResourceExhaustedError("queue full"), 429), "Overloaded");
  EXPECT_EQ(type(absl::DeadlineExceededError("late"), 504), "Overloaded");
  EXPECT_EQ(type(absl::UnavailableError("stopping"), 503), "Unhealthy");
  EXPECT_EQ(type(absl::InternalError("engine"), 500), "Backend");
  EXPECT_EQ(json::parse(ErrorBody(absl::ResourceExhaustedError("queue full"), 429, Api::kTei)),
            json::parse(R"({"error": "queue full", "error_type": "Overloaded"})"));
}

TEST(HttpErrorsTest, OpenAiShapeTypesAndCodes) {
  EXPECT_EQ(OpenAiError(absl::InvalidArgumentError("input 2: text is empty")),
            json::parse(R"({"message": "input 2: text is empty", "type": "invalid_request_error",
                            "param": null, "code": "invalid_value"})"));
  const json key = OpenAiError(absl::UnauthenticatedError("no key"), 401);
  EXPECT_EQ(key["type"], "invalid_request_error");
  EXPECT_EQ(key["code"], "invalid_api_key");
  const json full = OpenAiError(absl::ResourceExhaustedError("queue full"), 429);
  EXPECT_EQ(full["type"], "tokens");
  EXPECT_EQ(full["code"], "rate_limit_exceeded");
  const json route = OpenAiError(absl::NotFoundError("no route GET /v1/x"), 404);
  EXPECT_EQ(route["type"], "invalid_request_error");
  EXPECT_EQ(route["code"], nullptr);
  const json model =
      OpenAiError(WithOpenAiDetail(absl::NotFoundError("The model 'x' does not exist"), "model",
                                   "model_not_found"),
                  404);
  EXPECT_EQ(model["param"], "model");
  EXPECT_EQ(model["code"], "model_not_found");
  const json late = OpenAiError(absl::DeadlineExceededError("late"), 504);
  EXPECT_EQ(late["type"], "server_error");
  EXPECT_EQ(late["code"], nullptr);
}

// A too-long input names what the route accepts to cut it; OpenAI's answer
// says which input ("input[1]" in a list, "input" alone) and its code.
TEST(HttpErrorsTest, TooLongInputsPerRoute) {
  const absl::Status too_long = core::WithInputIndex(
      1,
      core::WithInputProblem(core::InputProblem::kTooLong,
                             absl::InvalidArgumentError(
                                 "text is 602 tokens long, more than the model's maximum of 512")));
  const absl::Status openai = ForEmbeddingsRoute(too_long, Api::kOpenAi, /*input_is_list=*/true);
  EXPECT_EQ(OpenAiError(openai),
            json({{"message",
                   "input 1: text is 602 tokens long, more than the model's maximum of 512 (send "
                   "\"truncate\": true to cut it, or start the server with --auto-truncate)"},
                  {"type", "invalid_request_error"},
                  {"param", "input[1]"},
                  {"code", "context_length_exceeded"}}));
  EXPECT_EQ(OpenAiError(ForEmbeddingsRoute(too_long, Api::kOpenAi, false))["param"], "input");
  const absl::Status tei = ForEmbeddingsRoute(too_long, Api::kTei, true);
  EXPECT_EQ(tei.message(),
            "input 1: text is 602 tokens long, more than the model's maximum of 512 (send "
            "\"truncate\": true to cut it)");
  EXPECT_EQ(HttpStatusFor(tei, Api::kTei), 422);
  // Cohere's /v2/embed cuts with "truncate": "END" or "START".
  const absl::Status cohere = ForEmbeddingsRoute(too_long, Api::kCohere, true);
  EXPECT_EQ(cohere.message(),
            "input 1: text is 602 tokens long, more than the model's maximum of 512 (send "
            "\"truncate\": \"END\" or \"START\" to cut it)");
  EXPECT_EQ(HttpStatusFor(cohere, Api::kCohere), 400);
  EXPECT_EQ(json::parse(ErrorBody(cohere, 400, Api::kCohere)),
            json({{"message", cohere.message()}}));
  // Other input errors keep their message; OpenAI gets the input's param.
  const absl::Status empty =
      core::WithInputIndex(0, core::WithInputProblem(core::InputProblem::kEmpty,
                                                     absl::InvalidArgumentError("text is empty")));
  const json error = OpenAiError(ForEmbeddingsRoute(empty, Api::kOpenAi, true));
  EXPECT_EQ(error["message"], "input 0: text is empty");
  EXPECT_EQ(error["param"], "input[0]");
  EXPECT_EQ(error["code"], "invalid_value");
  EXPECT_EQ(ForEmbeddingsRoute(absl::UnavailableError("stopping"), Api::kOpenAi, true),
            absl::UnavailableError("stopping"));
}

}  // namespace
}  // namespace server::http
