// The one UTF-8 rule (server/grpc/utf8_fields.h) on every RPC that carries
// text, over a real gRPC socket (GrpcCoreServer): a string field that is not
// UTF-8 is INVALID_ARGUMENT naming the field and its element, before any model
// or head is looked at. The same messages from the check of parsed messages,
// which protobuf builds whose parser lets invalid UTF-8 through rely on.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "server/grpc/utf8_fields.h"
#include "support/grpc_core_server.h"
#include "support/test_server.h"

namespace server {
namespace {

namespace v1 = encoder::v1;
using Stub = v1::Encoder::Stub;

const std::string kBad("ab\xff", 3);  // not UTF-8 at byte 2

struct Case {
  std::string what;
  std::shared_ptr<google::protobuf::Message> request;
  std::string message;  // the INVALID_ARGUMENT's
  std::function<grpc::Status(Stub&, const google::protobuf::Message&)> call;
};

// A call of `method` with `request` (of its own type) and a 30 s deadline.
template <typename Request, typename Response>
std::function<grpc::Status(Stub&, const google::protobuf::Message&)> Calling(
    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*)) {
  return [method](Stub& stub, const google::protobuf::Message& request) {
    grpc::ClientContext context;
    testing_support::SetDeadline(&context);
    Response response;
    return (stub.*method)(&context, static_cast<const Request&>(request), &response);
  };
}

template <typename Request>
std::shared_ptr<Request> Make(const std::function<void(Request&)>& fill) {
  auto request = std::make_shared<Request>();
  fill(*request);
  return request;
}

std::vector<Case> EveryTextCarryingRpc() {
  return {
      {"Encode text", Make<v1::EncodeRequest>([](auto& r) {
         r.add_inputs()->set_text("fine");
         r.add_inputs()->set_text(kBad);
       }),
       "input 1: text is not valid UTF-8 (at byte 2)", Calling(&Stub::Encode)},
      {"Encode text_pair", Make<v1::EncodeRequest>([](auto& r) {
         v1::TextPair* pair = r.add_inputs()->mutable_text_pair();
         pair->set_text("fine");
         pair->set_text_pair(kBad);
       }),
       "input 0: text_pair is not valid UTF-8 (at byte 2)", Calling(&Stub::Encode)},
      {"Encode prompt", Make<v1::EncodeRequest>([](auto& r) {
         r.add_inputs()->set_text("fine");
         r.set_prompt(kBad);
       }),
       "prompt is not valid UTF-8 (at byte 2)", Calling(&Stub::Encode)},
      {"Encode model", Make<v1::EncodeRequest>([](auto& r) {
         r.add_inputs()->set_text("fine");
         r.set_model(kBad);
       }),
       "model is not valid UTF-8 (at byte 2)", Calling(&Stub::Encode)},
      {"Tokenize text_pair", Make<v1::TokenizeRequest>([](auto& r) {
         r.set_text("fine");
         r.set_text_pair(kBad);
       }),
       "text_pair is not valid UTF-8 (at byte 2)", Calling(&Stub::Tokenize)},
      {"Decode model", Make<v1::DecodeRequest>([](auto& r) {
         r.add_ids(2);
         r.set_model(kBad);
       }),
       "model is not valid UTF-8 (at byte 2)", Calling(&Stub::Decode)},
      {"GetModelInfo model", Make<v1::GetModelInfoRequest>([](auto& r) { r.set_model(kBad); }),
       "model is not valid UTF-8 (at byte 2)", Calling(&Stub::GetModelInfo)},
      {"Rerank query", Make<v1::RerankRequest>([](auto& r) {
         r.set_query(kBad);
         r.add_texts("fine");
       }),
       "query is not valid UTF-8 (at byte 2)", Calling(&Stub::Rerank)},
      {"Rerank texts", Make<v1::RerankRequest>([](auto& r) {
         r.set_query("fine");
         r.add_texts("fine");
         r.add_texts(kBad);
       }),
       "text 1 is not valid UTF-8 (at byte 2)", Calling(&Stub::Rerank)},
      {"Rerank instruction", Make<v1::RerankRequest>([](auto& r) {
         r.set_query("fine");
         r.add_texts("fine");
         r.set_instruction(kBad);
       }),
       "instruction is not valid UTF-8 (at byte 2)", Calling(&Stub::Rerank)},
      {"Classify text_pair", Make<v1::ClassifyRequest>([](auto& r) {
         r.add_inputs()->set_text("fine");
         v1::TextPair* pair = r.add_inputs()->mutable_text_pair();
         pair->set_text("fine");
         pair->set_text_pair(kBad);
       }),
       "input 1: text_pair is not valid UTF-8 (at byte 2)", Calling(&Stub::Classify)},
      {"EncodeSparse text", Make<v1::EncodeSparseRequest>([](auto& r) {
         r.add_inputs()->mutable_token_ids()->add_ids(2);
         r.add_inputs()->set_text("fine");
         r.add_inputs()->set_text(kBad);
       }),
       "input 2: text is not valid UTF-8 (at byte 2)", Calling(&Stub::EncodeSparse)},
      {"EncodeMulti text", Make<v1::EncodeMultiRequest>([](auto& r) {
         r.add_inputs()->set_text(kBad);
         r.add_outputs(v1::OUTPUT_KIND_DENSE);
       }),
       "input 0: text is not valid UTF-8 (at byte 2)", Calling(&Stub::EncodeMulti)},
      {"EncodeChunks text", Make<v1::EncodeChunksRequest>([](auto& r) {
         r.set_text(kBad);
         r.set_chunk_tokens(2);
       }),
       "text is not valid UTF-8 (at byte 2)", Calling(&Stub::EncodeChunks)},
  };
}

// The client's protobuf complains of each bad text it serializes.
class GrpcUtf8Test : public ::testing::Test {
 private:
  google::protobuf::LogSilencer silence_;
};

TEST_F(GrpcUtf8Test, EveryTextCarryingRpcRefusesInvalidUtf8NamingTheField) {
  testing_support::GrpcCoreServer server;
  ASSERT_TRUE(server.ok());
  auto stub = v1::Encoder::NewStub(testing_support::Connect(server.port()));
  for (const Case& c : EveryTextCarryingRpc()) {
    SCOPED_TRACE(c.what);
    const grpc::Status status = c.call(*stub, *c.request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), c.message);
  }
}

TEST_F(GrpcUtf8Test, EncodeStreamAnswersInvalidUtf8AsTheRequestsErrorAndGoesOn) {
  testing_support::GrpcCoreServer server;
  ASSERT_TRUE(server.ok());
  auto stub = v1::Encoder::NewStub(testing_support::Connect(server.port()));
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  auto stream = stub->EncodeStream(&context);
  v1::EncodeRequest bad;
  bad.set_id("bad");
  v1::TextPair* pair = bad.add_inputs()->mutable_text_pair();
  pair->set_text("fine");
  pair->set_text_pair(kBad);
  v1::EncodeRequest good;
  good.set_id("good");
  good.add_inputs()->set_text("fine");
  ASSERT_TRUE(stream->Write(bad));
  v1::EncodeResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.id(), "bad");
  EXPECT_EQ(response.error().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(response.error().message(), "input 0: text_pair is not valid UTF-8 (at byte 2)");
  ASSERT_TRUE(stream->Write(good));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.id(), "good");
  EXPECT_FALSE(response.has_error()) << response.error().message();
  EXPECT_EQ(response.outputs_size(), 1);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// What ParseRequest checks when the parser let the bytes through; the wire
// walk (when it did not) names the same field.
TEST_F(GrpcUtf8Test, ParsedAndWireChecksNameTheSameField) {
  for (const Case& c : EveryTextCarryingRpc()) {
    SCOPED_TRACE(c.what);
    const absl::Status parsed = CheckUtf8Fields(*c.request);
    EXPECT_EQ(parsed.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.message(), c.message);
    const absl::Status wire =
        CheckUtf8Fields(c.request->SerializeAsString(), c.request->GetDescriptor());
    EXPECT_EQ(wire, parsed);
  }
  v1::EncodeRequest fine;
  fine.add_inputs()->mutable_text_pair()->set_text("caf\xc3\xa9");
  fine.set_model("m");
  EXPECT_TRUE(CheckUtf8Fields(fine).ok());
  EXPECT_TRUE(CheckUtf8Fields(fine.SerializeAsString(), fine.GetDescriptor()).ok());
}

}  // namespace
}  // namespace server
