// Window mode's rerank over real sockets, on the service core with the fake
// engine (FakeBackend: a pair's score is its token count): gRPC Rerank with
// long_input LONG_INPUT_WINDOW, TEI /rerank and Cohere /v1/rerank with
// "long_input": "window". TestModel: max length 64; ("hello", 100 words)
// leaves W = 64 - 3 - 1 = 60 text tokens per pair, O = 15, stride 45:
// windows [0, 60) and [45, 100), pairs of 64 and 59 tokens; the best is 64.
// Without long_input the text is cut (one pair of 64) and no windows appear.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "support/grpc_core_server.h"
#include "support/http_test_server.h"
#include "support/test_server.h"

namespace server {
namespace {

using nlohmann::json;

std::string Words(int n) {
  std::string text = "hello";
  for (int i = 1; i < n; ++i) text += " hello";
  return text;
}

TEST(LongInputsRerankTest, GrpcScoresATooLongTextByItsBestWindow) {
  testing_support::GrpcCoreServer server(testing_support::CoreService::RerankerHeads());
  ASSERT_TRUE(server.ok());
  auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(server.port()));
  encoder::v1::RerankRequest request;
  request.set_query("hello");
  request.add_texts(Words(100));
  request.add_texts("hello hello");
  request.set_long_input(encoder::v1::LONG_INPUT_WINDOW);
  for (const bool window : {true, false}) {
    if (!window) request.clear_long_input();
    grpc::ClientContext context;
    testing_support::SetDeadline(&context);
    encoder::v1::RerankResponse response;
    const grpc::Status status = stub->Rerank(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.results_size(), 2);
    EXPECT_EQ(response.results(0).index(), 0);
    EXPECT_EQ(response.results(0).score(), 64.0f);
    EXPECT_EQ(response.results(0).windows(), window ? 2 : 0);
    EXPECT_EQ(response.results(1).windows(), window ? 1 : 0);
    EXPECT_EQ(response.tokens(), window ? 64 + 59 + 6 : 64 + 6);
  }
}

TEST(LongInputsRerankTest, HttpTeiAndCohereReportWindowsPerResult) {
  testing_support::HttpTestSetup setup;
  setup.heads = testing_support::CoreService::RerankerHeads();
  testing_support::HttpTestServer http(std::move(setup));
  ASSERT_TRUE(http.ok());
  const json tei = {
      {"query", "hello"}, {"texts", {Words(100), "hello hello"}}, {"long_input", "window"}};
  testing_support::HttpResponse response = http.Call("POST", "/rerank", tei.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body);
  EXPECT_EQ(body[0]["index"], 0);
  EXPECT_EQ(body[0]["score"], 64.0);
  EXPECT_EQ(body[0]["windows"], 2);
  EXPECT_EQ(body[1]["windows"], 1);
  const json cohere = {
      {"query", "hello"}, {"documents", {Words(100), "hello hello"}}, {"long_input", "window"}};
  response = http.Call("POST", "/v1/rerank", cohere.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  body = json::parse(response.body);
  EXPECT_EQ(body["results"][0]["windows"], 2);
  // Default: cut, no "windows".
  response = http.Call("POST", "/rerank", json{{"query", "hello"}, {"texts", {Words(100)}}}.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(json::parse(response.body)[0].contains("windows"));
}

}  // namespace
}  // namespace server
