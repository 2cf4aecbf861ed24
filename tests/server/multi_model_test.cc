// Several models in one server, over real sockets (gRPC and HTTP): each
// model answers as it does alone (distinct hidden sizes, so a mix-up shows),
// requests pick their model by name, unknown and missing names are refused
// with the served names listed, listings, health and metrics are per model,
// and requests to both models interleaved from several threads are all
// answered correctly.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "encoder/v1/encoder.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "support/http_test_client.h"
#include "support/test_server.h"

namespace server {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using nlohmann::json;
using testing_support::HttpResponse;
using testing_support::HttpTestConnection;
using testing_support::MultiModelTestServer;
using testing_support::TestModel;

constexpr float kAloneTolerance = 1e-4f;

class MultiModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new MultiModelTestServer({{"alpha", 64, 7}, {"beta", 32, 11}, {"gamma", 96, 13}});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(server_->ok());
    stub_ = encoder::v1::Encoder::NewStub(testing_support::Connect(server_->server().port()));
  }

  static encoder::v1::EncodeRequest TextRequest(const std::string& model, const std::string& text) {
    encoder::v1::EncodeRequest request;
    request.set_model(model);
    request.add_inputs()->set_text(text);
    request.set_pooling(encoder::v1::POOLING_MEAN);
    return request;
  }

  // `values` equal `model` encoding `text` alone (mean pooling, not normalized).
  static void ExpectAlone(const std::string& model, const std::string& text,
                          const std::vector<float>& values) {
    int rows = 0, tokens = 0;
    const std::vector<float> expected = server_->model(model).EncodeAlone(
        core::Input::Text(text), engine::Pooling::kMean, false, true, &rows, &tokens);
    ASSERT_EQ(values.size(), expected.size()) << model;
    for (size_t k = 0; k < expected.size(); ++k) {
      ASSERT_NEAR(values[k], expected[k], kAloneTolerance) << model << " component " << k;
    }
  }

  static HttpResponse Http(const std::string& method, const std::string& path,
                           const std::string& body = "") {
    HttpTestConnection connection(server_->server().http_port());
    absl::StatusOr<HttpResponse> response = connection.Request(method, path, body);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : HttpResponse{};
  }

  static MultiModelTestServer* server_;
  std::unique_ptr<encoder::v1::Encoder::Stub> stub_;
};

MultiModelTestServer* MultiModelTest::server_ = nullptr;

TEST_F(MultiModelTest, EachModelAnswersOverGrpcAsItDoesAlone) {
  for (const std::string model : {"alpha", "beta", "gamma"}) {
    encoder::v1::EncodeResponse response;
    const grpc::Status status =
        testing_support::Encode(*stub_, TextRequest(model, "hello world"), &response);
    ASSERT_TRUE(status.ok()) << model << ": " << status.error_message();
    ASSERT_EQ(response.outputs_size(), 1);
    EXPECT_EQ(response.outputs(0).cols(), server_->model(model).hidden());
    ExpectAlone(model, "hello world",
                {response.outputs(0).values().begin(), response.outputs(0).values().end()});
  }
}

TEST_F(MultiModelTest, UnknownOrMissingModelNamesAreRefusedListingTheServedNames) {
  encoder::v1::EncodeResponse response;
  grpc::Status status = testing_support::Encode(*stub_, TextRequest("delta", "x"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find(R"("alpha", "beta", "gamma")"), std::string::npos)
      << status.error_message();
  status = testing_support::Encode(*stub_, TextRequest("", "x"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find(R"("alpha", "beta", "gamma")"), std::string::npos)
      << status.error_message();

  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::ModelInfo info;
  EXPECT_EQ(stub_->GetModelInfo(&context, {}, &info).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  HttpResponse http = Http("POST", "/v1/embeddings", R"({"input": "x", "model": "delta"})");
  EXPECT_EQ(http.status, 404) << http.body;
  EXPECT_NE(http.body.find("alpha"), std::string::npos) << http.body;
  http = Http("POST", "/embed", R"({"inputs": "x"})");
  EXPECT_EQ(http.status, 422) << http.body;  // TEI's answer to INVALID_ARGUMENT
  EXPECT_NE(http.body.find("gamma"), std::string::npos) << http.body;
  http = Http("POST", "/embed", R"({"inputs": "x", "model": "delta"})");
  EXPECT_EQ(http.status, 404) << http.body;
}

TEST_F(MultiModelTest, ListModelsAndGetModelInfoDescribeEachModel) {
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::ListModelsResponse list;
  ASSERT_TRUE(stub_->ListModels(&context, {}, &list).ok());
  ASSERT_EQ(list.models_size(), 3);
  EXPECT_EQ(list.models(0).name(), "alpha");
  EXPECT_EQ(list.models(1).name(), "beta");
  EXPECT_EQ(list.models(1).hidden_size(), 32);
  EXPECT_EQ(list.models(2).hidden_size(), 96);

  grpc::ClientContext one;
  testing_support::SetDeadline(&one);
  encoder::v1::GetModelInfoRequest request;
  request.set_model("gamma");
  encoder::v1::ModelInfo info;
  ASSERT_TRUE(stub_->GetModelInfo(&one, request, &info).ok());
  EXPECT_EQ(info.name(), "gamma");
  EXPECT_EQ(info.hidden_size(), 96);

  const json models = json::parse(Http("GET", "/v1/models").body);
  ASSERT_EQ(models["data"].size(), 3u) << models;
  EXPECT_EQ(models["data"][0]["id"], "alpha");
  EXPECT_EQ(models["data"][2]["id"], "gamma");
  EXPECT_EQ(Http("GET", "/v1/models/beta").status, 200);
  const json info_list = json::parse(Http("GET", "/info").body);
  ASSERT_EQ(info_list["models"].size(), 3u) << info_list;
  EXPECT_EQ(info_list["models"][1]["model_id"], "beta");
  const HttpResponse named = Http("GET", "/info?model=gamma");
  ASSERT_EQ(named.status, 200) << named.body;
  EXPECT_EQ(json::parse(named.body)["model_id"], "gamma");
  EXPECT_EQ(Http("GET", "/info?model=delta").status, 404);
}

TEST_F(MultiModelTest, EachModelAnswersOverHttpAsItDoesAlone) {
  for (const std::string model : {"alpha", "beta", "gamma"}) {
    const HttpResponse response =
        Http("POST", "/embed",
             json({{"inputs", "hello world"}, {"model", model}, {"normalize", false}}).dump());
    ASSERT_EQ(response.status, 200) << model << ": " << response.body;
    const json vectors = json::parse(response.body);
    ASSERT_EQ(vectors.size(), 1u);
    ASSERT_EQ(static_cast<int>(vectors[0].size()), server_->model(model).hidden()) << model;
    const HttpResponse openai =
        Http("POST", "/v1/embeddings", json({{"input", "hello"}, {"model", model}}).dump());
    ASSERT_EQ(openai.status, 200) << openai.body;
    EXPECT_EQ(json::parse(openai.body)["model"], model);
  }
}

TEST_F(MultiModelTest, TokenizeAndDecodeOverHttpNameTheirModel) {
  HttpResponse response = Http("POST", "/tokenize", R"({"inputs": "hello", "model": "beta"})");
  EXPECT_EQ(response.status, 200) << response.body;
  response = Http("POST", "/tokenize", R"({"inputs": "hello"})");
  EXPECT_EQ(response.status, 422) << response.body;
  response = Http("POST", "/decode", R"({"ids": [101, 102], "model": "gamma"})");
  EXPECT_EQ(response.status, 200) << response.body;
  response = Http("POST", "/decode", R"({"ids": [101, 102], "model": "delta"})");
  EXPECT_EQ(response.status, 404) << response.body;
}

TEST_F(MultiModelTest, HealthIsServingOverallAndPerModel) {
  auto health =
      grpc::health::v1::Health::NewStub(testing_support::Connect(server_->server().port()));
  for (const std::string service : {"", "encoder.v1.Encoder", "alpha", "beta", "gamma"}) {
    grpc::ClientContext context;
    testing_support::SetDeadline(&context);
    HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, request, &response).ok()) << service;
    EXPECT_EQ(response.status(), HealthCheckResponse::SERVING) << service;
  }
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  HealthCheckRequest request;
  request.set_service("delta");
  HealthCheckResponse response;
  EXPECT_EQ(health->Check(&context, request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Http("GET", "/health").status, 200);
  EXPECT_EQ(Http("GET", "/health?model=beta").status, 200);
  EXPECT_EQ(Http("GET", "/health?model=delta").status, 404);
}

TEST_F(MultiModelTest, MetricsCarryTheModelLabel) {
  encoder::v1::EncodeResponse response;
  ASSERT_TRUE(testing_support::Encode(*stub_, TextRequest("beta", "count me"), &response).ok());
  EXPECT_EQ(testing_support::Encode(*stub_, TextRequest("delta", "no such model"), &response)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  // A call is counted when the server is done with it, which may be just
  // after the client has its answer: scrape until the last call shows (4 s at most).
  const std::string not_found = R"(encoder_requests_total{code="NOT_FOUND",model="alpha")";
  const std::string ok_beta =
      R"(encoder_requests_total{code="OK",model="beta",rpc="Encode",transport="grpc"} )";
  absl::StatusOr<HttpResponse> scrape;
  for (int attempt = 0; attempt < 40; ++attempt) {
    HttpTestConnection metrics(server_->server().metrics_port());
    scrape = metrics.Request("GET", "/metrics");
    if (scrape.ok() && scrape->body.find(not_found) != std::string::npos &&
        scrape->body.find(ok_beta) != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  for (const std::string model : {"alpha", "beta", "gamma"}) {
    EXPECT_NE(scrape->body.find("encoder_batch_duration_seconds_count{model=\"" + model + "\"}"),
              std::string::npos)
        << model;
    EXPECT_NE(scrape->body.find("encoder_model_info{"), std::string::npos);
  }
  EXPECT_NE(scrape->body.find(ok_beta), std::string::npos);
  EXPECT_NE(scrape->body.find(not_found), std::string::npos)
      << "a request naming no served model is counted under the first";
}

TEST_F(MultiModelTest, InterleavedRequestsToAllModelsFromSeveralThreadsAreAllAnsweredCorrectly) {
  const std::vector<std::string> models = {"alpha", "beta", "gamma"};
  constexpr int kThreads = 4, kCalls = 12;
  // The references first, on this thread: a reference engine is not shared
  // between threads.
  std::vector<std::vector<std::vector<float>>> expected(kThreads);
  const auto text_of = [](int t, int i) {
    return "thread " + std::to_string(t) + " call " + std::to_string(i);
  };
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kCalls; ++i) {
      int rows = 0, tokens = 0;
      expected[t].push_back(server_->model(models[(t + i) % models.size()])
                                .EncodeAlone(core::Input::Text(text_of(t, i)),
                                             engine::Pooling::kMean, false, true, &rows, &tokens));
    }
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(server_->server().port()));
      for (int i = 0; i < kCalls; ++i) {
        const std::string& model = models[(t + i) % models.size()];
        encoder::v1::EncodeResponse response;
        const grpc::Status status =
            testing_support::Encode(*stub, TextRequest(model, text_of(t, i)), &response);
        ASSERT_TRUE(status.ok()) << status.error_message();
        ASSERT_EQ(response.outputs_size(), 1);
        const auto& values = response.outputs(0).values();
        ASSERT_EQ(values.size(), static_cast<int>(expected[t][i].size())) << model;
        for (int k = 0; k < values.size(); ++k) {
          ASSERT_NEAR(values[k], expected[t][i][k], kAloneTolerance)
              << model << " " << t << " " << i;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// One unnamed --model keeps today's naming and needs no "model" field.
TEST(OneModelTest, AnUnnamedModelNeedsNoModelField) {
  testing_support::TestServer server([](ServerConfig& config) { config.http_port = 0; });
  ASSERT_TRUE(server.ok());
  auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(server.port()));
  encoder::v1::EncodeRequest request;
  request.add_inputs()->set_text("hi");
  encoder::v1::EncodeResponse response;
  EXPECT_TRUE(testing_support::Encode(*stub, request, &response).ok());
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::ModelInfo info;
  ASSERT_TRUE(stub->GetModelInfo(&context, {}, &info).ok());
  request.set_model(info.name());
  EXPECT_TRUE(testing_support::Encode(*stub, request, &response).ok());
  request.set_model("other");
  EXPECT_EQ(testing_support::Encode(*stub, request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // OpenAI clients hard-code names: with one model any name is served.
  HttpTestConnection connection(server.server().http_port());
  absl::StatusOr<HttpResponse> http = connection.Request(
      "POST", "/v1/embeddings", R"({"input": "hi", "model": "text-embedding-3-small"})");
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->status, 200) << http->body;
  // /info keeps its one-model shape.
  HttpTestConnection again(server.server().http_port());
  http = again.Request("GET", "/info");
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(json::parse(http->body)["model_id"], info.name());
}

}  // namespace
}  // namespace server
