// Late chunking through the whole server over real sockets: gRPC EncodeChunks
// and HTTP POST /embed_chunks on tests/golden/late_chunking/model (a BERT of
// max length 32 with mean pooling, Dense and Normalize), against the PyTorch
// reference of tests/golden/make_late_chunking.py (reference.json): chunks in
// one window, chunk_tokens in one window, and a text that needs 3 windows
// (two requests: default overlap 7, and overlap 10 with dimensions and no
// normalization). Then the refusals on both transports, naming the chunk.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "engine/tokenizer.h"
#include "nlohmann/json.hpp"
#include "server/core/requests/late_chunking.h"
#include "support/golden_json.h"
#include "support/http_test_client.h"
#include "support/test_server.h"

namespace server::late_chunking_server_test {
namespace {

using encoder::v1::EncodeChunksRequest;
using encoder::v1::EncodeChunksResponse;
using nlohmann::json;
using testing_support::HttpTestConnection;

// The engine runs in float32; the reference is float64 PyTorch, and float32
// PyTorch stays within 1e-5 of it (make_late_chunking.py checks 10x inside
// this bound). The engine's float32 sums run in another order, so allow 1e-4
// absolute on values of about 0.1-1 (unit vectors of 24, tanh outputs). A
// wrong stitching rule, or encoding each chunk alone, moves some value by
// more than 1e-3 (the script checks that too), so the bound still catches them.
constexpr double kTolerance = 1e-4;

const std::string kModelDir = std::string(GOLDEN_DIR) + "/late_chunking/model";

json Reference() {
  return testing_support::ReadJsonFile(std::string(GOLDEN_DIR) + "/late_chunking/reference.json");
}

class LateChunkingServerTest : public ::testing::Test {
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

  static std::unique_ptr<encoder::v1::Encoder::Stub> Stub() {
    return encoder::v1::Encoder::NewStub(testing_support::Connect(server_->port()));
  }

  static EncodeChunksRequest ToProto(const json& test) {
    EncodeChunksRequest request;
    request.set_text(test["text"].get<std::string>());
    const json& fields = test["request"];
    if (fields.contains("chunks")) {
      for (const json& span : fields["chunks"]) {
        encoder::v1::ChunkSpan* out = request.add_chunks();
        out->set_start(span[0].get<int>());
        out->set_end(span[1].get<int>());
      }
    }
    if (fields.contains("chunk_tokens")) request.set_chunk_tokens(fields["chunk_tokens"]);
    if (fields.contains("window_overlap")) request.set_window_overlap(fields["window_overlap"]);
    if (fields.contains("normalize")) request.set_normalize(fields["normalize"]);
    if (fields.contains("dimensions")) request.set_dimensions(fields["dimensions"]);
    return request;
  }

  static inline EncoderServer* server_ = nullptr;
  static inline json* reference_ = nullptr;
};

void ExpectNear(const std::vector<float>& values, const json& expected, const std::string& what) {
  testing_support::ExpectValuesNear(values, expected, kTolerance, what);
}

// The fixture's ids and spans come from a whitespace split of the text over
// a vocabulary of whole words (make_late_chunking.py); the model's own
// tokenizer must agree, or the numbers below compare different inputs.
TEST_F(LateChunkingServerTest, TheTokenizerGivesTheReferencesIdsAndSpans) {
  absl::StatusOr<std::unique_ptr<engine::Tokenizer>> tokenizer = engine::Tokenizer::Load(kModelDir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  for (const json& test : (*reference_)["cases"]) {
    const std::string text = test["text"].get<std::string>();
    absl::StatusOr<engine::Encoding> encoding =
        (*tokenizer)->Encode(text, 0, engine::TruncationSide::kRight, false);
    ASSERT_TRUE(encoding.ok()) << encoding.status();
    EXPECT_EQ(encoding->ids, test["ids"].get<std::vector<int32_t>>()) << test["name"];
    const std::vector<core::ChunkSpan> spans =
        core::chunking::CodePointSpans(text, encoding->offsets);
    std::vector<std::vector<int>> got;
    for (const core::ChunkSpan& span : spans) got.push_back({span.start, span.end});
    EXPECT_EQ(got, test["token_spans"].get<std::vector<std::vector<int>>>()) << test["name"];
  }
}

TEST_F(LateChunkingServerTest, GrpcMatchesThePyTorchReference) {
  auto stub = Stub();
  for (const json& test : (*reference_)["cases"]) {
    const std::string name = test["name"];
    grpc::ClientContext context;
    EncodeChunksResponse response;
    const grpc::Status status = stub->EncodeChunks(&context, ToProto(test), &response);
    ASSERT_TRUE(status.ok()) << name << ": " << status.error_message();
    const json& expected = test["expected"];
    EXPECT_EQ(response.windows(), expected["windows"].get<int>()) << name;
    EXPECT_EQ(response.tokens(), expected["tokens"].get<int64_t>()) << name;
    ASSERT_EQ(response.chunks_size(), static_cast<int>(expected["chunks"].size())) << name;
    for (int i = 0; i < response.chunks_size(); ++i) {
      const encoder::v1::ChunkEmbedding& chunk = response.chunks(i);
      const json& want = expected["chunks"][static_cast<size_t>(i)];
      const std::string what = name + " chunk " + std::to_string(i);
      EXPECT_EQ(chunk.start(), want["start"].get<int>()) << what;
      EXPECT_EQ(chunk.end(), want["end"].get<int>()) << what;
      EXPECT_EQ(chunk.tokens(), want["tokens"].get<int>()) << what;
      ExpectNear(std::vector<float>(chunk.values().begin(), chunk.values().end()),
                 want["embedding"], what);
    }
  }
}

TEST_F(LateChunkingServerTest, HttpMatchesThePyTorchReferenceAlsoInBase64) {
  HttpTestConnection connection(server_->http_port());
  ASSERT_TRUE(connection.connected());
  for (const json& test : (*reference_)["cases"]) {
    for (const bool base64 : {false, true}) {
      const std::string name = test["name"].get<std::string>() + (base64 ? " base64" : "");
      json body = test["request"];
      body["inputs"] = test["text"];
      if (base64) body["encoding_format"] = "base64";
      absl::StatusOr<testing_support::HttpResponse> response = connection.Request(
          "POST", "/embed_chunks", body.dump(), "Content-Type: application/json\r\n");
      ASSERT_TRUE(response.ok()) << response.status();
      ASSERT_EQ(response->status, 200) << name << ": " << response->body;
      const json answer = json::parse(response->body);
      const json& expected = test["expected"];
      EXPECT_EQ(answer["windows"], expected["windows"]) << name;
      EXPECT_EQ(answer["tokens"], expected["tokens"]) << name;
      ASSERT_EQ(answer["chunks"].size(), expected["chunks"].size()) << name;
      for (size_t i = 0; i < answer["chunks"].size(); ++i) {
        const json& chunk = answer["chunks"][i];
        const json& want = expected["chunks"][i];
        const std::string what = name + " chunk " + std::to_string(i);
        EXPECT_EQ(chunk["start"], want["start"]) << what;
        EXPECT_EQ(chunk["end"], want["end"]) << what;
        EXPECT_EQ(chunk["tokens"], want["tokens"]) << what;
        std::vector<float> values;
        if (base64) {
          std::string bytes;
          ASSERT_TRUE(absl::Base64Unescape(chunk["embedding"].get<std::string>(), &bytes)) << what;
          ASSERT_EQ(bytes.size() % 4, 0u) << what;
          values.resize(bytes.size() / 4);
          std::memcpy(values.data(), bytes.data(), bytes.size());  // little-endian host
        } else {
          values = chunk["embedding"].get<std::vector<float>>();
        }
        ExpectNear(values, want["embedding"], what);
      }
    }
  }
}

TEST_F(LateChunkingServerTest, AChunkPastTheEndIsRefusedOnBothTransportsNamingIt) {
  const json& test = (*reference_)["cases"][0];
  const std::string text = test["text"];
  const int length = core::chunking::CodePointLength(text);
  EncodeChunksRequest request;
  request.set_text(text);
  encoder::v1::ChunkSpan* first = request.add_chunks();
  first->set_start(0);
  first->set_end(5);
  encoder::v1::ChunkSpan* second = request.add_chunks();
  second->set_start(6);
  second->set_end(length + 1);
  grpc::ClientContext context;
  EncodeChunksResponse response;
  const grpc::Status status = Stub()->EncodeChunks(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("chunks[1]"), std::string::npos) << status.error_message();

  HttpTestConnection connection(server_->http_port());
  const json body = {{"inputs", text}, {"chunks", {{0, 5}, {6, length + 1}}}};
  absl::StatusOr<testing_support::HttpResponse> answer = connection.Request(
      "POST", "/embed_chunks", body.dump(), "Content-Type: application/json\r\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 422) << answer->body;
  EXPECT_NE(answer->body.find("chunks[1]"), std::string::npos) << answer->body;
  // Neither chunks nor chunk_tokens; a span that is not two integers.
  for (const json& bad : {json{{"inputs", text}}, json{{"inputs", text}, {"chunks", {{0, "5"}}}}}) {
    answer = connection.Request("POST", "/embed_chunks", bad.dump(),
                                "Content-Type: application/json\r\n");
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->status, 422) << bad.dump() << ": " << answer->body;
  }
}

}  // namespace
}  // namespace server::late_chunking_server_test
