// One name everywhere: --served-model-name (or the name the path gives) is
// what gRPC GetModelInfo, HTTP /info and /v1/models, the OpenAI response's
// "model" and the model label of encoder_model_info say, on a real server.
#include <gtest/gtest.h>

#include <string>

#include "encoder/v1/encoder.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "support/http_test_client.h"
#include "support/test_server.h"

namespace server {
namespace {

using nlohmann::json;
using testing_support::HttpResponse;
using testing_support::HttpTestConnection;

class ServedNameTest : public testing_support::TestServerSuite {
 protected:
  static void SetUpTestSuite() {
    StartSuiteServer([](ServerConfig& config) {
      config.served_model_name = "acme/encoder-v1";
      config.http_port = 0;
    });
  }

  json HttpJson(const std::string& method, const std::string& path, const std::string& body = "") {
    HttpTestConnection connection(suite_server().server().http_port());
    absl::StatusOr<HttpResponse> response = connection.Request(method, path, body);
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return nullptr;
    EXPECT_EQ(response->status, 200) << path << ": " << response->body;
    return json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  }
};

TEST_F(ServedNameTest, EveryAnswerAndTheMetricsSayTheServedName) {
  auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(suite_server().port()));
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::ModelInfo info;
  ASSERT_TRUE(stub->GetModelInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.name(), "acme/encoder-v1");

  EXPECT_EQ(HttpJson("GET", "/info")["model_id"], "acme/encoder-v1");
  EXPECT_EQ(HttpJson("GET", "/v1/models")["data"][0]["id"], "acme/encoder-v1");
  EXPECT_EQ(HttpJson("POST", "/v1/embeddings", R"({"input": "hello"})")["model"],
            "acme/encoder-v1");

  HttpTestConnection metrics(suite_server().metrics_port());
  absl::StatusOr<HttpResponse> scrape = metrics.Request("GET", "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  const size_t series = scrape->body.find("\nencoder_model_info{");
  ASSERT_NE(series, std::string::npos) << scrape->body;
  const size_t begin = series + 1;
  const std::string line = scrape->body.substr(begin, scrape->body.find('\n', begin) - begin);
  EXPECT_NE(line.find(",model=\"acme/encoder-v1\","), std::string::npos) << line;
}

}  // namespace
}  // namespace server
