// The HTTP adapter over a real socket, on the service core with a fake engine
// (FakeBackend: each vector is {first id, token count}, so the expected
// numbers are known without an engine). Routes and their shapes, every error
// path (bad JSON, wrong types, huge and half-sent bodies, keys, overload,
// deadline, shutdown), keep-alive, and other clients being served meanwhile.
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
using testing_support::TestModel;

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> keys = {}, HttpOptions options = {},
             BatcherConfig batcher = CoreService::DefaultConfig()) {
    http_ = std::make_unique<HttpTestServer>(std::move(keys), options, batcher);
    ASSERT_TRUE(http_->ok());
  }

  CoreService& core() { return http_->core(); }
  HttpResponse Call(const std::string& method, const std::string& path,
                    const std::string& body = "", const std::string& headers = "") {
    return http_->Call(method, path, body, headers);
  }

  // Whether GET /metrics shows `line` within 5 s.
  bool MetricsShow(const std::string& line) {
    for (int i = 0; i < 500; ++i) {
      const HttpResponse metrics = Call("GET", "/metrics");
      EXPECT_EQ(metrics.status, 200);
      if (metrics.body.find(line) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

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
  EXPECT_TRUE(MetricsShow(R"(encoder_requests_total{code="OK",rpc="Encode",transport="http"} 1)"));
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
  const HttpResponse malformed = Call("POST", "/v1/embeddings", R"({"input": )");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(json::parse(malformed.body)["error"]["message"], "the body is not valid JSON");
  EXPECT_EQ(json::parse(malformed.body)["error"]["type"], "invalid_request_error");

  const HttpResponse bad_input = Call("POST", "/v1/embeddings", R"({"input": ["ok", ""]})");
  EXPECT_EQ(bad_input.status, 400);
  EXPECT_EQ(json::parse(bad_input.body)["error"]["message"], "input 1: text is empty");

  const HttpResponse tei = Call("POST", "/embed", R"({"inputs": [[1, 2], [-1]]})");
  EXPECT_EQ(tei.status, 422);
  EXPECT_EQ(json::parse(tei.body),
            json::parse(R"({"error": "input 1: id -1 at position 0 is negative",
                            "error_type": "validation"})"));
  EXPECT_EQ(Call("GET", "/embed").status, 405);
  EXPECT_EQ(Call("GET", "/nowhere").status, 404);
}

TEST_F(HttpServerTest, BodyLimitAndHalfSentBodiesLeaveOthersServed) {
  HttpOptions options;
  options.max_body_bytes = 2048;
  options.io_timeout = std::chrono::milliseconds(300);
  Start({}, options);
  const std::string big = R"({"input": ")" + std::string(4096, 'a') + R"("})";
  const HttpResponse too_big = Call("POST", "/v1/embeddings", big);
  EXPECT_EQ(too_big.status, 413);
  EXPECT_NE(json::parse(too_big.body)["error"]["message"].get<std::string>().find("2048"),
            std::string::npos);

  // Says 100 bytes, sends 10, then stalls: answered 400 after the I/O timeout.
  HttpTestConnection stalled(http_->port());
  ASSERT_TRUE(stalled
                  .SendRaw("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                           "{\"inputs\":")
                  .ok());
  // Meanwhile another client is served.
  EXPECT_EQ(Call("POST", "/embed", R"({"inputs": [[3, 4]]})").status, 200);
  absl::StatusOr<HttpResponse> stalled_response = stalled.ReadResponse();
  if (stalled_response.ok()) {
    EXPECT_EQ(stalled_response->status, 400);
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
  EXPECT_EQ(
      Call("POST", "/embed", R"({"inputs": [[1]]})", "Authorization: Bearer wrong\r\n").status,
      401);
  EXPECT_EQ(
      Call("POST", "/embed", R"({"inputs": [[1]]})", "Authorization: Bearer s3cret\r\n").status,
      200);
  EXPECT_EQ(Call("GET", "/info", "", "Authorization: bearer other\r\n").status, 200);
  // Probes and metrics stay open.
  EXPECT_EQ(Call("GET", "/health").status, 200);
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="UNAUTHENTICATED",rpc="Encode",transport="http"} 2)"));
  EXPECT_EQ(Call("GET", "/metrics").body.find("s3cret"), std::string::npos);
}

TEST_F(HttpServerTest, OverloadDeadlineAndShutdown) {
  BatcherConfig batcher = CoreService::DefaultConfig();
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
  EXPECT_EQ(json::parse(overloaded.body)["error"]["type"], "rate_limit_error");

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
  EXPECT_EQ(json::parse(draining.body)["error_type"], "unhealthy");
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
  release.join();
  first.join();
}

}  // namespace
}  // namespace server::http
