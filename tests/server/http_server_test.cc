// The HTTP adapter over a real socket, on the service core with a fake engine
// (FakeBackend: each vector is {first id, token count}, so the expected
// numbers are known without an engine). Routes and their shapes, every error
// path (bad JSON, wrong types, too-long inputs, unknown paths and methods,
// huge and half-sent bodies, keys, overload, deadline, shutdown), truncation
// and --auto-truncate, keep-alive, and other clients being served meanwhile.
// Runs under TSan (scripts/test, tsan stage).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/http_test_server.h"

namespace server::http {
namespace {

using nlohmann::json;
using testing_support::CoreService;
using testing_support::HttpResponse;
using testing_support::HttpTestConnection;
using testing_support::HttpTestServer;
using testing_support::HttpTestSetup;
using testing_support::TestModel;

// "hello" 600 times: 602 tokens with [CLS] and [SEP] (checked in each test).
std::string LongText() {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "hello ";
  return text;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> keys = {}, HttpOptions options = {},
             core::BatcherConfig batcher = CoreService::DefaultConfig()) {
    http_ = std::make_unique<HttpTestServer>(std::move(keys), options, batcher);
    ASSERT_TRUE(http_->ok());
  }
  void Start(HttpTestSetup setup) {
    http_ = std::make_unique<HttpTestServer>(std::move(setup));
    ASSERT_TRUE(http_->ok());
  }
  // LongText()'s token count, which the tests below rely on.
  void ExpectLongTextIs602Tokens() {
    ASSERT_EQ(core().model().tokenizer->Encode(LongText()).value().ids.size(), 602u);
  }

  CoreService& core() { return http_->core(); }
  HttpResponse Call(const std::string& method, const std::string& path,
                    const std::string& body = "", const std::string& headers = "") {
    return http_->Call(method, path, body, headers);
  }

  bool MetricsShow(const std::string& line) { return http_->MetricsShow(line); }

  std::unique_ptr<HttpTestServer> http_;
};

TEST_F(HttpServerTest, OpenAiEmbeddingsShapeAndValues) {
  Start();
  const HttpResponse response =
      Call("POST", "/v1/embeddings", R"({"input": [[5, 6, 7], [9, 8]], "model": "x"})");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.at("content-type"), "application/json");
  const json body = json::parse(response.body);
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["usage"], json::parse(R"({"prompt_tokens": 5, "total_tokens": 5})"));
  EXPECT_EQ(body["data"][0], json::parse(R"({"object": "embedding", "index": 0,
                                             "embedding": [5.0, 3.0]})"));
  EXPECT_EQ(body["data"][1]["embedding"], json::parse("[9.0, 2.0]"));
  // OpenAI's vectors are normalized: the request asked the core for it.
  ASSERT_FALSE(core().backend().specs().empty());
  EXPECT_TRUE(core().backend().specs()[0].normalize);

  // dimensions 1 of (5, 3): (1); base64 of 1.0f is AACAPw==.
  const json cut =
      json::parse(Call("POST", "/v1/embeddings",
                       R"({"input": [5, 6, 7], "dimensions": 1, "encoding_format": "base64"})")
                      .body);
  EXPECT_EQ(cut["data"][0]["embedding"], "AACAPw==");

  const json models = json::parse(Call("GET", "/v1/models").body);
  EXPECT_EQ(models["data"][0]["id"], "test-model");
  EXPECT_EQ(models["object"], "list");
}

// The embedding fields reach the core: dimensions (cut before normalizing,
// in the engine), normalize (TEI: true unless false; OpenAI: always),
// prompt_name (checked against the model's prompts).
TEST_F(HttpServerTest, EmbeddingFieldsReachTheCore) {
  Start();
  ASSERT_EQ(Call("POST", "/v1/embeddings", R"({"input": [5, 6, 7], "dimensions": 2})").status, 200);
  ASSERT_EQ(Call("POST", "/embed", R"({"inputs": [[4, 5]], "dimensions": 1})").status, 200);
  ASSERT_EQ(
      Call("POST", "/embed", R"({"inputs": [[4, 5]], "dimensions": 3, "normalize": false})").status,
      200);
  const std::vector<server::core::OutputSpec> specs = core().backend().specs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].dimensions, 2);
  EXPECT_TRUE(specs[0].normalize);
  EXPECT_TRUE(specs[0].model_pooling);
  EXPECT_EQ(specs[1].dimensions, 1);
  EXPECT_TRUE(specs[1].normalize);
  EXPECT_EQ(specs[2].dimensions, 3);
  EXPECT_FALSE(specs[2].normalize);

  for (const char* body :
       {R"({"inputs": [[4, 5]], "dimensions": 0})", R"({"inputs": [[4, 5]], "dimensions": 65})"}) {
    const HttpResponse bad = Call("POST", "/embed", body);
    EXPECT_EQ(bad.status, 422) << body << " " << bad.body;
    EXPECT_NE(bad.body.find("dimensions"), std::string::npos) << bad.body;
  }
  const HttpResponse bad = Call("POST", "/v1/embeddings", R"({"input": "hi", "dimensions": -1})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("dimensions"), std::string::npos) << bad.body;
  // The test model has no prompts: a prompt_name is refused, naming it.
  const HttpResponse prompt =
      Call("POST", "/embed", R"({"inputs": "hello", "prompt_name": "query"})");
  EXPECT_EQ(prompt.status, 422) << prompt.body;
  EXPECT_NE(prompt.body.find("prompt_name"), std::string::npos) << prompt.body;
}

TEST_F(HttpServerTest, TeiRoutes) {
  Start();
  const HttpResponse embed =
      Call("POST", "/embed", R"({"inputs": [[4, 5], [6]], "normalize": false})");
  ASSERT_EQ(embed.status, 200) << embed.body;
  EXPECT_EQ(json::parse(embed.body), json::parse("[[4.0, 2.0], [6.0, 1.0]]"));
  EXPECT_FALSE(core().backend().specs()[0].normalize);

  const HttpResponse tokenize = Call("POST", "/tokenize", R"({"inputs": "hello"})");
  ASSERT_EQ(tokenize.status, 200) << tokenize.body;
  const json tokens = json::parse(tokenize.body);
  const engine::Encoding expected = core().model().tokenizer->Encode("hello", 0).value();
  ASSERT_EQ(tokens[0].size(), expected.ids.size());
  EXPECT_EQ(tokens[0][0]["id"], expected.ids[0]);
  EXPECT_EQ(tokens[0][0]["special"], true);

  const json info = json::parse(Call("GET", "/info").body);
  EXPECT_EQ(info["model_id"], "test-model");
  EXPECT_EQ(info["max_input_length"], TestModel::kMaxLength);
  EXPECT_EQ(info["model_type"]["embedding"]["pooling"], "cls");

  EXPECT_EQ(Call("GET", "/health").status, 200);
  // A request is counted once its answer is written: the client may read it
  // a moment earlier, hence a bounded wait.
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="OK",model="test",rpc="Encode",transport="http"} 1)"));
  // /decode: the ids of "hello" back to the text, one list or a batch of them.
  const json ids = json(expected.ids);
  const HttpResponse one = Call("POST", "/decode", json{{"ids", ids}}.dump());
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body), "hello");
  const HttpResponse kept =
      Call("POST", "/decode",
           json{{"ids", json::array({ids, ids})}, {"skip_special_tokens", false}}.dump());
  ASSERT_EQ(kept.status, 200) << kept.body;
  EXPECT_EQ(json::parse(kept.body), json::array({"[CLS] hello [SEP]", "[CLS] hello [SEP]"}));
  const HttpResponse outside = Call("POST", "/decode", R"({"ids": [[2], [2, 1000000]]})");
  EXPECT_EQ(outside.status, 422) << outside.body;
  EXPECT_NE(outside.body.find("input 1"), std::string::npos) << outside.body;
}

TEST_F(HttpServerTest, ErrorsInEachApisShape) {
  Start();
  // 10 bytes: the value is missing at the end, position 11.
  const HttpResponse malformed = Call("POST", "/v1/embeddings", R"({"input": )");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(
      json::parse(malformed.body),
      json::parse(
          R"({"error": {"message": "the body is not valid JSON at line 1, column 11 (byte 11): syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal",
                            "type": "invalid_request_error", "param": null, "code": null}})"));

  const HttpResponse bad_input = Call("POST", "/v1/embeddings", R"({"input": ["ok", ""]})");
  EXPECT_EQ(bad_input.status, 400);
  EXPECT_EQ(json::parse(bad_input.body),
            json::parse(R"({"error": {"message": "input 1: text is empty",
                            "type": "invalid_request_error", "param": "input[1]",
                            "code": "invalid_value"}})"));
  const HttpResponse dimensions =
      Call("POST", "/v1/embeddings", R"({"input": "a", "dimensions": 100000})");
  EXPECT_EQ(dimensions.status, 400);
  EXPECT_EQ(json::parse(dimensions.body)["error"]["param"], "dimensions");
  EXPECT_EQ(json::parse(dimensions.body)["error"]["code"], "invalid_value");

  const HttpResponse tei = Call("POST", "/embed", R"({"inputs": [[1, 2], [-1]]})");
  EXPECT_EQ(tei.status, 422);
  EXPECT_EQ(json::parse(tei.body),
            json::parse(R"({"error": "input 1: id -1 at position 0 is negative",
                            "error_type": "Validation"})"));
  // The field named once, no "input 1: inputs[1]".
  const HttpResponse wrong_type = Call("POST", "/embed", R"({"inputs": ["a", 3]})");
  EXPECT_EQ(wrong_type.status, 422);
  EXPECT_EQ(json::parse(wrong_type.body)["error"],
            "inputs[1] must be a string or an array of token ids, not number");
  // TEI's Empty: 400.
  const HttpResponse empty_text = Call("POST", "/embed", R"({"inputs": ["ok", ""]})");
  EXPECT_EQ(empty_text.status, 400);
  EXPECT_EQ(json::parse(empty_text.body),
            json::parse(R"({"error": "input 1: text is empty", "error_type": "Empty"})"));
  const HttpResponse no_inputs = Call("POST", "/embed", R"({"inputs": []})");
  EXPECT_EQ(no_inputs.status, 400);
  EXPECT_EQ(json::parse(no_inputs.body)["error_type"], "Empty");
}

// 404 and 405 in each API's shape (never "Backend"); 405 says what is allowed.
TEST_F(HttpServerTest, UnknownPathsAndWrongMethods) {
  Start();
  const HttpResponse get_embed = Call("GET", "/embed");
  EXPECT_EQ(get_embed.status, 405);
  EXPECT_EQ(get_embed.headers.at("allow"), "POST");
  EXPECT_EQ(json::parse(get_embed.body),
            json({{"error", "GET is not allowed on /embed (allowed: POST)"},
                  {"error_type", "Validation"}}));
  const HttpResponse post_models = Call("POST", "/v1/models", "{}");
  EXPECT_EQ(post_models.status, 405);
  EXPECT_EQ(post_models.headers.at("allow"), "GET");
  EXPECT_EQ(json::parse(post_models.body)["error"],
            json({{"message", "POST is not allowed on /v1/models (allowed: GET)"},
                  {"type", "invalid_request_error"},
                  {"param", nullptr},
                  {"code", nullptr}}));
  const HttpResponse nowhere = Call("GET", "/nowhere");
  EXPECT_EQ(nowhere.status, 404);
  EXPECT_EQ(json::parse(nowhere.body),
            json::parse(R"({"error": "no route GET /nowhere", "error_type": "Validation"})"));
  EXPECT_EQ(nowhere.headers.count("allow"), 0u);
  const HttpResponse v1_nowhere = Call("POST", "/v1/completions", "{}");
  EXPECT_EQ(v1_nowhere.status, 404);
  EXPECT_EQ(json::parse(v1_nowhere.body)["error"]["type"], "invalid_request_error");
}

// /health answers as TEI's: 200 with no body, so no content type either.
TEST_F(HttpServerTest, HealthIsAnEmpty200) {
  Start();
  const HttpResponse health = Call("GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "");
  EXPECT_EQ(health.headers.at("content-length"), "0");
  EXPECT_EQ(health.headers.count("content-type"), 0u);
}

// GET /v1/models/{id}: the model object for the served name, slashes and all
// (hub names); OpenAI's 404 model_not_found for any other.
TEST_F(HttpServerTest, ModelsByIdIncludingHubNames) {
  HttpTestSetup setup;
  setup.model_name = "BAAI/bge-m3";
  Start(setup);
  const HttpResponse model = Call("GET", "/v1/models/BAAI/bge-m3");
  ASSERT_EQ(model.status, 200) << model.body;
  EXPECT_EQ(json::parse(model.body),
            json::parse(R"({"id": "BAAI/bge-m3", "object": "model", "created": 0,
                            "owned_by": "encoder-server"})"));
  // A client that percent-encodes the slash gets the same.
  EXPECT_EQ(Call("GET", "/v1/models/BAAI%2Fbge-m3").status, 200);
  const HttpResponse other = Call("GET", "/v1/models/BAAI/bge-large");
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(
      json::parse(other.body),
      json::parse(
          R"({"error": {"message": "The model 'BAAI/bge-large' does not exist: this server serves 'BAAI/bge-m3'",
                            "type": "invalid_request_error", "param": "model",
                            "code": "model_not_found"}})"));
  // Counted as the client's mistake it is, not as a server error.
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="INVALID_ARGUMENT",model="test",rpc="GetModelInfo",transport="http"} 1)"));
  const json list = json::parse(Call("GET", "/v1/models").body);
  EXPECT_EQ(list["data"], json::array({json::parse(model.body)}));
  // Embeddings answer whatever model the client names, with the served name.
  const HttpResponse named =
      Call("POST", "/v1/embeddings", R"({"input": [5, 6], "model": "text-embedding-3-small"})");
  ASSERT_EQ(named.status, 200) << named.body;
  EXPECT_EQ(json::parse(named.body)["model"], "BAAI/bge-m3");
}

// The server's default (--auto-truncate on): a 602-token input is cut to the
// model's 64, and usage counts the 64 encoded, not the 602 sent; a request's
// "truncate": false still asks for the error, which names the input, its
// length, the maximum and how to cut it on this route.
TEST_F(HttpServerTest, AutoTruncateCutsUnlessTheRequestSaysNot) {
  Start();
  ExpectLongTextIs602Tokens();
  const json long_text = LongText();
  const HttpResponse cut =
      Call("POST", "/v1/embeddings", json{{"input", json::array({"hello", long_text})}}.dump());
  ASSERT_EQ(cut.status, 200) << cut.body;
  // "hello": [CLS] hello [SEP], 3; the long text: 64.
  EXPECT_EQ(json::parse(cut.body)["usage"],
            json::parse(R"({"prompt_tokens": 67, "total_tokens": 67})"));
  EXPECT_EQ(json::parse(Call("GET", "/info").body)["auto_truncate"], true);

  const HttpResponse refused =
      Call("POST", "/v1/embeddings",
           json{{"input", json::array({"hello", long_text})}, {"truncate", false}}.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(json::parse(refused.body)["error"],
            json({{"message",
                   "input 1: text is 602 tokens long, more than the model's maximum of 64 (send "
                   "\"truncate\": true to cut it, or start the server with --auto-truncate)"},
                  {"type", "invalid_request_error"},
                  {"param", "input[1]"},
                  {"code", "context_length_exceeded"}}));
  const HttpResponse tei =
      Call("POST", "/embed", json{{"inputs", long_text}, {"truncate", false}}.dump());
  EXPECT_EQ(tei.status, 422);
  EXPECT_EQ(json::parse(tei.body),
            json({{"error",
                   "input 0: text is 602 tokens long, more than the model's maximum of 64 (send "
                   "\"truncate\": true to cut it)"},
                  {"error_type", "Validation"}}));
}

// --auto-truncate off: too-long inputs are refused unless the request says
// "truncate": true, on either route and from either end.
TEST_F(HttpServerTest, WithoutAutoTruncateTheRequestDecides) {
  HttpTestSetup setup;
  setup.limits.auto_truncate = false;
  Start(setup);
  ExpectLongTextIs602Tokens();
  const json long_text = LongText();
  EXPECT_EQ(json::parse(Call("GET", "/info").body)["auto_truncate"], false);
  const HttpResponse refused = Call("POST", "/v1/embeddings", json{{"input", long_text}}.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(json::parse(refused.body)["error"]["param"], "input");
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(Call("POST", "/embed", json{{"inputs", long_text}}.dump()).status, 422);

  for (const char* direction : {"Right", "Left", "left"}) {
    SCOPED_TRACE(direction);
    const HttpResponse openai = Call(
        "POST", "/v1/embeddings",
        json{{"input", long_text}, {"truncate", true}, {"truncation_direction", direction}}.dump());
    ASSERT_EQ(openai.status, 200) << openai.body;
    EXPECT_EQ(json::parse(openai.body)["usage"]["prompt_tokens"], 64);
    const HttpResponse tei =
        Call("POST", "/embed",
             json{{"inputs", long_text}, {"truncate", true}, {"truncation_direction", direction}}
                 .dump());
    ASSERT_EQ(tei.status, 200) << tei.body;
    // FakeBackend's vector: {first id, token count}.
    EXPECT_EQ(json::parse(tei.body)[0][1], 64.0);
  }
}

// add_special_tokens false: the text's own tokens, no [CLS]/[SEP].
TEST_F(HttpServerTest, TokenizeWithoutSpecialTokens) {
  Start();
  const HttpResponse bare = Call(
      "POST", "/tokenize", R"({"inputs": ["hello", "hello hello"], "add_special_tokens": false})");
  ASSERT_EQ(bare.status, 200) << bare.body;
  const json lists = json::parse(bare.body);
  ASSERT_EQ(lists.size(), 2u);
  ASSERT_EQ(lists[0].size(), 1u);
  EXPECT_EQ(lists[0][0]["text"], "hello");
  EXPECT_EQ(lists[0][0]["special"], false);
  EXPECT_EQ(lists[0][0]["start"], 0);
  EXPECT_EQ(lists[0][0]["stop"], 5);
  ASSERT_EQ(lists[1].size(), 2u);
  EXPECT_EQ(lists[1][1]["start"], 6);
  EXPECT_EQ(lists[1][1]["stop"], 11);
  const HttpResponse empty =
      Call("POST", "/tokenize", R"({"inputs": ["a", ""], "add_special_tokens": false})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(json::parse(empty.body),
            json::parse(R"({"error": "input 1: text is empty", "error_type": "Empty"})"));
}

TEST_F(HttpServerTest, BodyLimitAndHalfSentBodiesLeaveOthersServed) {
  HttpOptions options;
  options.max_body_bytes = 2048;
  options.body_timeout = std::chrono::milliseconds(300);
  Start({}, options);
  const std::string big = R"({"input": ")" + std::string(4096, 'a') + R"("})";
  const HttpResponse too_big = Call("POST", "/v1/embeddings", big);
  EXPECT_EQ(too_big.status, 413);
  EXPECT_NE(json::parse(too_big.body)["error"]["message"].get<std::string>().find("2048"),
            std::string::npos);

  // Says 100 bytes, sends 10, then stalls: answered 408 after the body timeout.
  HttpTestConnection stalled(http_->port());
  ASSERT_TRUE(stalled
                  .SendRaw("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                           "{\"inputs\":")
                  .ok());
  // Meanwhile another client is served.
  EXPECT_EQ(Call("POST", "/embed", R"({"inputs": [[3, 4]]})").status, 200);
  absl::StatusOr<HttpResponse> stalled_response = stalled.ReadResponse();
  if (stalled_response.ok()) {
    EXPECT_EQ(stalled_response->status, 408);
  }  // else the server closed it without an answer, also acceptable
  EXPECT_EQ(Call("GET", "/health").status, 200);
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Start();
  HttpTestConnection connection(http_->port());
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<HttpResponse> response =
        connection.Request("POST", "/embed", absl::StrCat(R"({"inputs": [[)", 10 + i, "]]}"));
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->status, 200);
    EXPECT_EQ(json::parse(response->body)[0][0], 10 + i);
  }
}

TEST_F(HttpServerTest, ApiKeys) {
  Start({"s3cret", "other"});
  const HttpResponse missing = Call("POST", "/v1/embeddings", R"({"input": [1]})");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.headers.at("www-authenticate"), "Bearer");
  EXPECT_EQ(json::parse(missing.body)["error"]["code"], "invalid_api_key");
  const HttpResponse wrong =
      Call("POST", "/embed", R"({"inputs": [[1]]})", "Authorization: Bearer wrong\r\n");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(json::parse(wrong.body)["error_type"], "Validation");
  EXPECT_EQ(
      Call("POST", "/embed", R"({"inputs": [[1]]})", "Authorization: Bearer s3cret\r\n").status,
      200);
  EXPECT_EQ(Call("GET", "/info", "", "Authorization: bearer other\r\n").status, 200);
  // Probes and metrics stay open.
  EXPECT_EQ(Call("GET", "/health").status, 200);
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="UNAUTHENTICATED",model="test",rpc="Encode",transport="http"} 2)"));
  EXPECT_EQ(Call("GET", "/metrics").body.find("s3cret"), std::string::npos);
}

TEST_F(HttpServerTest, OverloadDeadlineAndShutdown) {
  core::BatcherConfig batcher = CoreService::DefaultConfig();
  batcher.max_batch_tokens = 64;
  batcher.max_queue_tokens = 64;
  Start({}, {}, batcher);
  core().backend().Hold();
  // The engine is busy with the first request; it fills the queue's budget.
  std::thread first(
      [&] { EXPECT_EQ(Call("POST", "/embed", R"({"inputs": [[1, 2]]})").status, 200); });
  ASSERT_TRUE(core().backend().AwaitStarted(1));
  // While the engine is busy with the first request, 60 tokens fill the queue.
  std::vector<int32_t> ids(60, 5);
  std::thread filler([&] {
    EXPECT_EQ(Call("POST", "/embed", json({{"inputs", {ids}}}).dump()).status, 200);
  });
  for (int i = 0; i < 2000 && core().batcher().queued_tokens() < 60; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(core().batcher().queued_tokens(), 60);
  const HttpResponse overloaded = Call("POST", "/v1/embeddings", json({{"input", ids}}).dump());
  EXPECT_EQ(overloaded.status, 429);
  EXPECT_EQ(overloaded.headers.at("retry-after"), "1");
  EXPECT_EQ(json::parse(overloaded.body)["error"]["type"], "tokens");
  EXPECT_EQ(json::parse(overloaded.body)["error"]["code"], "rate_limit_exceeded");

  EXPECT_EQ(Call("POST", "/embed", R"({"inputs": [[1]]})", "X-Request-Timeout-Ms: abc\r\n").status,
            422);
  core().backend().Release();
  first.join();
  filler.join();

  http_->server().SetServing(false);
  EXPECT_EQ(Call("GET", "/health").status, 503);
  core().dispatcher().StopAccepting();
  const HttpResponse draining = Call("POST", "/embed", R"({"inputs": [[1]]})");
  EXPECT_EQ(draining.status, 503);
  EXPECT_EQ(json::parse(draining.body)["error_type"], "Unhealthy");
}

TEST_F(HttpServerTest, PastTheDeadlineIs504) {
  Start();
  core().backend().Hold();
  std::thread first([&] { Call("POST", "/embed", R"({"inputs": [[1, 2]]})"); });
  ASSERT_TRUE(core().backend().AwaitStarted(1));
  // Queued behind a held batch with 1 ms to live: refused at admission (429)
  // or dropped when its deadline passes (504), never computed.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    core().backend().Release();
  });
  const HttpResponse late =
      Call("POST", "/embed", R"({"inputs": [[3, 4]]})", "X-Request-Timeout-Ms: 1\r\n");
  EXPECT_TRUE(late.status == 504 || late.status == 429) << late.status << " " << late.body;
  // Either way TEI's type for load.
  EXPECT_EQ(json::parse(late.body)["error_type"], "Overloaded") << late.body;
  release.join();
  first.join();
  // A deadline beyond a day is a day: no overflow of the clock.
  EXPECT_EQ(Call("POST", "/embed", R"({"inputs": [[3, 4]]})",
                 "X-Request-Timeout-Ms: 9000000000000000000\r\n")
                .status,
            200);
}

}  // namespace
}  // namespace server::http
