// Window mode (server/core/requests/long_inputs.h) through the whole server over real
// sockets: gRPC Encode and HTTP /embed and /v1/embeddings on
// tests/golden/late_chunking/model (a BERT of max length 32, mean pooling,
// Dense, Normalize), against the PyTorch reference of
// tests/golden/make_long_inputs.py (tests/golden/long_inputs/reference.json):
// a 70-token text as 3 windows (normalized; and dimensions 12 unnormalized),
// a 22-token text as itself. Then the default (no long_input) unchanged: cut
// to 32 tokens, no windows reported; and --long-inputs window as the
// server's default.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "support/golden_json.h"
#include "support/http_test_client.h"
#include "support/test_server.h"

namespace server::long_inputs_server_test {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using nlohmann::json;
using testing_support::HttpTestConnection;

// The engine runs in float32; the reference is float64 PyTorch, and float32
// PyTorch stays within 2e-7 of it here (make_long_inputs.py checks 10x
// inside this bound). The engine sums in another order, so allow 1e-4
// absolute on values of about 0.1-1. Equal or window-length weights, or
// truncation, move some value by more than 1e-3; normalizing each window
// before pooling by 6e-4 (normalized) and 0.76 (unnormalized): the script
// checks that each stays above the bound.
constexpr double kTolerance = 1e-4;

const std::string kModelDir = std::string(GOLDEN_DIR) + "/late_chunking/model";

json Reference() {
  return testing_support::ReadJsonFile(std::string(GOLDEN_DIR) + "/long_inputs/reference.json");
}

void ExpectNear(const std::vector<float>& values, const json& expected, const std::string& what) {
  testing_support::ExpectValuesNear(values, expected, kTolerance, what);
}

EncodeRequest ToProto(const json& test, bool window) {
  EncodeRequest request;
  request.add_inputs()->set_text(test["text"].get<std::string>());
  const json& fields = test["request"];
  if (fields.contains("normalize")) request.set_normalize_output(fields["normalize"].get<bool>());
  if (fields.contains("dimensions")) request.set_dimensions(fields["dimensions"].get<int>());
  if (window) request.set_long_input(encoder::v1::LONG_INPUT_WINDOW);
  return request;
}

class LongInputsServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reference_ = new json(Reference());
    ServerConfig config = testing_support::TestServerConfig(kModelDir);
    config.http_port = 0;
    server_ = testing_support::StartServer(config).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete reference_;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static grpc::Status Encode(EncoderServer& server, const EncodeRequest& request,
                             EncodeResponse* response) {
    grpc::ClientContext context;
    return encoder::v1::Encoder::NewStub(testing_support::Connect(server.port()))
        ->Encode(&context, request, response);
  }

  static inline EncoderServer* server_ = nullptr;
  static inline json* reference_ = nullptr;
};

TEST_F(LongInputsServerTest, TheTokenizerGivesTheReferencesIds) {
  absl::StatusOr<std::unique_ptr<engine::Tokenizer>> tokenizer = engine::Tokenizer::Load(kModelDir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  for (const json& test : (*reference_)["cases"]) {
    absl::StatusOr<engine::Encoding> encoding =
        (*tokenizer)
            ->Encode(test["text"].get<std::string>(), 0, engine::TruncationSide::kRight, false);
    ASSERT_TRUE(encoding.ok()) << encoding.status();
    EXPECT_EQ(encoding->ids, test["ids"].get<std::vector<int32_t>>()) << test["name"];
  }
}

TEST_F(LongInputsServerTest, GrpcWindowModeMatchesThePyTorchReference) {
  for (const json& test : (*reference_)["cases"]) {
    const std::string name = test["name"];
    EncodeResponse response;
    const grpc::Status status = Encode(*server_, ToProto(test, true), &response);
    ASSERT_TRUE(status.ok()) << name << ": " << status.error_message();
    ASSERT_EQ(response.outputs_size(), 1) << name;
    const encoder::v1::Output& output = response.outputs(0);
    EXPECT_EQ(output.windows(), static_cast<int>(test["windows"].size())) << name;
    // Every window's tokens, its [CLS] and [SEP] included.
    int tokens = 0;
    for (const json& window : test["windows"]) {
      tokens += window[1].get<int>() - window[0].get<int>() + 2;
    }
    EXPECT_EQ(output.tokens(), tokens) << name;
    ExpectNear(std::vector<float>(output.values().begin(), output.values().end()), test["expected"],
               name);
  }
}

TEST_F(LongInputsServerTest, HttpWindowModeMatchesThePyTorchReferenceWithXWindows) {
  HttpTestConnection connection(server_->http_port());
  ASSERT_TRUE(connection.connected());
  for (const json& test : (*reference_)["cases"]) {
    const std::string name = test["name"];
    const std::string windows = std::to_string(test["windows"].size());
    json body = test["request"];
    body["inputs"] = test["text"];
    body["long_input"] = "window";
    absl::StatusOr<testing_support::HttpResponse> response =
        connection.Request("POST", "/embed", body.dump(), "Content-Type: application/json\r\n");
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->status, 200) << name << ": " << response->body;
    EXPECT_EQ(response->headers["x-windows"], windows) << name;
    ExpectNear(json::parse(response->body)[0].get<std::vector<float>>(), test["expected"],
               name + " /embed");
    if (!test["request"].empty()) continue;  // OpenAI always normalizes, all dimensions
    const json openai = {{"input", test["text"]}, {"model", "m"}, {"long_input", "window"}};
    response = connection.Request("POST", "/v1/embeddings", openai.dump(),
                                  "Content-Type: application/json\r\n");
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->status, 200) << name << ": " << response->body;
    EXPECT_EQ(response->headers["x-windows"], windows) << name;
    const json answer = json::parse(response->body);
    EXPECT_EQ(answer["data"][0]["windows"], test["windows"].size()) << name;
    ExpectNear(answer["data"][0]["embedding"].get<std::vector<float>>(), test["expected"],
               name + " /v1/embeddings");
  }
}

TEST_F(LongInputsServerTest, TheDefaultStillTruncatesAndReportsNoWindows) {
  const json& test = (*reference_)["cases"][0];  // 70 tokens
  EncodeResponse response;
  const grpc::Status status = Encode(*server_, ToProto(test, false), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs(0).windows(), 0);
  EXPECT_EQ(response.outputs(0).tokens(), 32);
  HttpTestConnection connection(server_->http_port());
  const json body = {{"inputs", test["text"]}};
  absl::StatusOr<testing_support::HttpResponse> answer =
      connection.Request("POST", "/embed", body.dump(), "Content-Type: application/json\r\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(answer->headers.count("x-windows"), 0u);
  // "long_input": "error" refuses it; a bad value names the field.
  const json refused = {{"inputs", test["text"]}, {"long_input", "error"}};
  answer =
      connection.Request("POST", "/embed", refused.dump(), "Content-Type: application/json\r\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 422) << answer->body;  // TEI's status for a too-long input
  EXPECT_NE(answer->body.find("text is 72 tokens long"), std::string::npos) << answer->body;
  const json bad = {{"inputs", test["text"]}, {"long_input", "slide"}};
  answer = connection.Request("POST", "/embed", bad.dump(), "Content-Type: application/json\r\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 422) << answer->body;
  EXPECT_NE(answer->body.find("long_input"), std::string::npos) << answer->body;
}

TEST_F(LongInputsServerTest, LongInputsWindowIsTheServersDefault) {
  ServerConfig config = testing_support::TestServerConfig(kModelDir);
  config.limits.long_inputs = core::LongInput::kWindow;
  std::unique_ptr<EncoderServer> windowing = testing_support::StartServer(config);
  ASSERT_NE(windowing, nullptr);
  const json& test = (*reference_)["cases"][0];
  EncodeResponse response;
  grpc::Status status = Encode(*windowing, ToProto(test, false), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs(0).windows(), 3);
  ExpectNear(
      std::vector<float>(response.outputs(0).values().begin(), response.outputs(0).values().end()),
      test["expected"], "server default");
  // The request's truncate wins over the server's default.
  EncodeRequest cut = ToProto(test, false);
  cut.set_truncate(true);
  status = Encode(*windowing, cut, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs(0).windows(), 0);
  EXPECT_EQ(response.outputs(0).tokens(), 32);
}

}  // namespace
}  // namespace server::long_inputs_server_test
