// EncodeRequest.embedding_type over a real gRPC channel, unary and streamed:
// each quantized answer equals the float answer of the same request
// quantized by the straightforward reading of sentence-transformers'
// quantize_embeddings below (not server/core/model/quantize.cc); int8 without
// calibration is FAILED_PRECONDITION naming --quantization-ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "support/files.h"
#include "support/test_server.h"

namespace {

using encoder::v1::EmbeddingType;
using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;

constexpr int kDim = testing_support::TestModel::kHidden;

std::vector<float> Minimum() {
  std::vector<float> out;
  for (int i = 0; i < kDim; ++i) out.push_back(-0.05f - 0.01f * static_cast<float>(i % 7));
  return out;
}
std::vector<float> Maximum() {
  std::vector<float> out;
  for (int i = 0; i < kDim; ++i) out.push_back(0.04f + 0.013f * static_cast<float>(i % 5));
  return out;
}

std::string RangesJson() {
  std::string json = "{\"ranges\": [[";
  const std::vector<float> lo = Minimum(), hi = Maximum();
  for (int i = 0; i < kDim; ++i) absl::StrAppend(&json, i ? ", " : "", lo[i]);
  json += "], [";
  for (int i = 0; i < kDim; ++i) absl::StrAppend(&json, i ? ", " : "", hi[i]);
  return json + "]]}";
}

// numpy on float32: ((e - starts) / steps [- 128]).astype(int8 | uint8),
// steps = (max - min) / 255; out of range clamped (as documented).
int Expected(float v, int i, bool int8) {
  // absl::StrAppend printed the ranges with 6 significant digits: read back.
  const float lo = std::stof(absl::StrCat(Minimum()[i]));
  const float hi = std::stof(absl::StrCat(Maximum()[i]));
  const float step = (hi - lo) / 255.0f;
  float scaled = (v - lo) / step;
  if (int8) scaled = scaled - 128.0f;
  const float low = int8 ? -128.0f : 0.0f, high = int8 ? 127.0f : 255.0f;
  if (!(scaled >= low)) return static_cast<int>(low);
  if (scaled >= high) return static_cast<int>(high);
  return static_cast<int>(std::trunc(scaled));
}

std::vector<int> ExpectedRow(const float* v, int n, EmbeddingType type) {
  std::vector<int> out;
  if (type == encoder::v1::EMBEDDING_TYPE_INT8 || type == encoder::v1::EMBEDDING_TYPE_UINT8) {
    for (int i = 0; i < n; ++i)
      out.push_back(Expected(v[i], i, type == encoder::v1::EMBEDDING_TYPE_INT8));
    return out;
  }
  for (int byte = 0; byte < (n + 7) / 8; ++byte) {
    int packed = 0;
    for (int bit = 0; bit < 8; ++bit) {
      const int i = byte * 8 + bit;
      packed = packed * 2 + (i < n && v[i] > 0 ? 1 : 0);
    }
    out.push_back(type == encoder::v1::EMBEDDING_TYPE_BINARY ? packed - 128 : packed);
  }
  return out;
}

std::vector<int> Integers(const std::string& bytes, EmbeddingType type) {
  const bool is_signed =
      type == encoder::v1::EMBEDDING_TYPE_INT8 || type == encoder::v1::EMBEDDING_TYPE_BINARY;
  std::vector<int> out;
  for (char c : bytes) {
    const auto u = static_cast<uint8_t>(c);
    out.push_back(is_signed ? static_cast<int>(static_cast<int8_t>(u)) : static_cast<int>(u));
  }
  return out;
}

EncodeRequest Request(EmbeddingType type, const std::string& id) {
  EncodeRequest request;
  request.set_id(id);
  for (const char* text : {"quantized vectors", "the quick brown fox", "x"}) {
    request.add_inputs()->set_text(text);
  }
  request.set_normalize(true);
  request.set_embedding_type(type);
  return request;
}

void ExpectQuantizedOf(const EncodeResponse& floats, const EncodeResponse& quantized,
                       EmbeddingType type) {
  ASSERT_EQ(floats.outputs_size(), quantized.outputs_size());
  for (int k = 0; k < floats.outputs_size(); ++k) {
    const encoder::v1::Output& f = floats.outputs(k);
    const encoder::v1::Output& q = quantized.outputs(k);
    EXPECT_EQ(q.values_size(), 0);
    EXPECT_EQ(q.rows(), 1);
    EXPECT_EQ(Integers(q.packed(), type), ExpectedRow(f.values().data(), f.values_size(), type))
        << "type " << type << " output " << k;
  }
}

TEST(QuantizedServerTest, EncodeAndEncodeStreamAnswerTheFloatAnswerQuantized) {
  testing_support::TempDir dir;
  const std::string ranges = dir.path() + "/ranges.json";
  testing_support::WriteFile(ranges, RangesJson());
  testing_support::TestServer server(
      [&](server::ServerConfig& config) { config.quantization_ranges[""] = ranges; });
  ASSERT_TRUE(server.ok());
  auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(server.port()));
  EncodeResponse floats;
  ASSERT_TRUE(
      testing_support::Encode(*stub, Request(encoder::v1::EMBEDDING_TYPE_FLOAT, "f"), &floats)
          .ok());
  const std::vector<EmbeddingType> types = {
      encoder::v1::EMBEDDING_TYPE_INT8, encoder::v1::EMBEDDING_TYPE_UINT8,
      encoder::v1::EMBEDDING_TYPE_BINARY, encoder::v1::EMBEDDING_TYPE_UBINARY};
  for (EmbeddingType type : types) {
    EncodeResponse quantized;
    const grpc::Status status = testing_support::Encode(*stub, Request(type, "q"), &quantized);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectQuantizedOf(floats, quantized, type);
  }
  // The stream: every type, answered by id.
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  auto stream = stub->EncodeStream(&context);
  for (EmbeddingType type : types) {
    ASSERT_TRUE(stream->Write(Request(type, std::to_string(static_cast<int>(type)))));
  }
  ASSERT_TRUE(stream->WritesDone());
  std::map<std::string, EncodeResponse> received;
  EncodeResponse response;
  while (stream->Read(&response)) received[response.id()] = response;
  ASSERT_TRUE(stream->Finish().ok());
  ASSERT_EQ(received.size(), types.size());
  for (EmbeddingType type : types) {
    const EncodeResponse& answer = received[std::to_string(static_cast<int>(type))];
    EXPECT_FALSE(answer.has_error()) << answer.error().message();
    ExpectQuantizedOf(floats, answer, type);
  }
}

TEST(QuantizedServerTest, Int8WithoutCalibrationIsFailedPrecondition) {
  testing_support::TestServer server;
  ASSERT_TRUE(server.ok());
  auto stub = encoder::v1::Encoder::NewStub(testing_support::Connect(server.port()));
  EncodeResponse response;
  const grpc::Status status =
      testing_support::Encode(*stub, Request(encoder::v1::EMBEDDING_TYPE_INT8, "i"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("--quantization-ranges"), std::string::npos)
      << status.error_message();
  // binary needs none.
  EXPECT_TRUE(
      testing_support::Encode(*stub, Request(encoder::v1::EMBEDDING_TYPE_BINARY, "b"), &response)
          .ok());
  EXPECT_EQ(response.outputs(0).packed().size(), static_cast<size_t>((kDim + 7) / 8));
}

}  // namespace
