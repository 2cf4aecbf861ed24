// The admission every RPC shares (server/grpc/unary_call.h, and the stream's
// own), over a real gRPC socket on the service core (GrpcCoreServer, the
// server's own listener): without a valid API key each call is
// UNAUTHENTICATED before its request is read; once the server stops
// accepting each is UNAVAILABLE; health, served by the listener, stays open
// and follows SetServing.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "encoder/v1/encoder.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "support/grpc_core_server.h"
#include "support/test_server.h"

namespace server {
namespace {

namespace v1 = encoder::v1;
using Stub = v1::Encoder::Stub;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

struct RpcCall {
  std::string name;
  // Calls it with `authorization` metadata (none when empty).
  std::function<grpc::StatusCode(Stub&, const std::string& authorization)> call;
};

// A call of `method` with a default request, except what `fill` sets.
template <typename Request, typename Response>
RpcCall Calling(const std::string& name,
                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                std::function<void(Request&)> fill = {}) {
  return {name, [method, fill](Stub& stub, const std::string& authorization) {
            grpc::ClientContext context;
            testing_support::SetDeadline(&context);
            if (!authorization.empty()) context.AddMetadata("authorization", authorization);
            Request request;
            if (fill) fill(request);
            Response response;
            return (stub.*method)(&context, request, &response).error_code();
          }};
}

grpc::StatusCode StreamOne(Stub& stub, const std::string& authorization) {
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
  auto stream = stub.EncodeStream(&context);
  v1::EncodeRequest request;
  request.add_inputs()->set_text("hello");
  stream->Write(request);
  stream->WritesDone();
  v1::EncodeResponse response;
  while (stream->Read(&response)) {
    if (response.has_error()) return static_cast<grpc::StatusCode>(response.error().code());
  }
  return stream->Finish().error_code();
}

std::vector<RpcCall> EveryRpc() {
  const auto text = [](v1::Input* input) { input->set_text("hello"); };
  return {
      Calling<v1::EncodeRequest, v1::EncodeResponse>("Encode", &Stub::Encode,
                                                     [&](auto& r) { text(r.add_inputs()); }),
      Calling<v1::TokenizeRequest, v1::TokenizeResponse>("Tokenize", &Stub::Tokenize,
                                                         [](auto& r) { r.set_text("hello"); }),
      Calling<v1::DecodeRequest, v1::DecodeResponse>("Decode", &Stub::Decode,
                                                     [](auto& r) { r.add_ids(2); }),
      Calling("GetModelInfo", &Stub::GetModelInfo),
      Calling("ListModels", &Stub::ListModels),
      Calling<v1::RerankRequest, v1::RerankResponse>("Rerank", &Stub::Rerank,
                                                     [](auto& r) {
                                                       r.set_query("hello");
                                                       r.add_texts("world");
                                                     }),
      Calling<v1::ClassifyRequest, v1::ClassifyResponse>("Classify", &Stub::Classify,
                                                         [&](auto& r) { text(r.add_inputs()); }),
      Calling<v1::EncodeSparseRequest, v1::EncodeSparseResponse>(
          "EncodeSparse", &Stub::EncodeSparse, [&](auto& r) { text(r.add_inputs()); }),
      Calling<v1::EncodeMultiRequest, v1::EncodeMultiResponse>("EncodeMulti", &Stub::EncodeMulti,
                                                               [&](auto& r) {
                                                                 text(r.add_inputs());
                                                                 r.add_outputs(
                                                                     v1::OUTPUT_KIND_DENSE);
                                                               }),
      Calling<v1::EncodeChunksRequest, v1::EncodeChunksResponse>("EncodeChunks",
                                                                 &Stub::EncodeChunks,
                                                                 [](auto& r) {
                                                                   r.set_text("hello world");
                                                                   r.set_chunk_tokens(1);
                                                                 }),
      {"EncodeStream", StreamOne},
  };
}

HealthCheckResponse::ServingStatus Health(const std::shared_ptr<grpc::Channel>& channel) {
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  HealthCheckRequest request;
  request.set_service("encoder.v1.Encoder");
  HealthCheckResponse response;
  const grpc::Status status = health->Check(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

TEST(GrpcAdmissionTest, EveryRpcNeedsAValidKeyWhileHealthStaysOpen) {
  testing_support::GrpcCoreServer server(testing_support::CoreService::MultiOutputHeads(),
                                         {"the-key"});
  ASSERT_TRUE(server.ok());
  auto channel = testing_support::Connect(server.port());
  auto stub = v1::Encoder::NewStub(channel);
  for (const RpcCall& rpc : EveryRpc()) {
    SCOPED_TRACE(rpc.name);
    EXPECT_EQ(rpc.call(*stub, ""), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(rpc.call(*stub, "Bearer wrong-key"), grpc::StatusCode::UNAUTHENTICATED);
    // Admitted: whatever the fake model then answers, not a refusal.
    const grpc::StatusCode admitted = rpc.call(*stub, "Bearer the-key");
    EXPECT_NE(admitted, grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_NE(admitted, grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_EQ(Health(channel), HealthCheckResponse::SERVING);
}

TEST(GrpcAdmissionTest, EveryRpcIsUnavailableOnceTheServerStopsAccepting) {
  testing_support::GrpcCoreServer server(testing_support::CoreService::MultiOutputHeads());
  ASSERT_TRUE(server.ok());
  auto channel = testing_support::Connect(server.port());
  auto stub = v1::Encoder::NewStub(channel);
  server.server().SetServing(false);
  EXPECT_EQ(Health(channel), HealthCheckResponse::NOT_SERVING);
  server.server().StopAccepting();
  for (const RpcCall& rpc : EveryRpc()) {
    SCOPED_TRACE(rpc.name);
    EXPECT_EQ(rpc.call(*stub, ""), grpc::StatusCode::UNAVAILABLE);
  }
}

}  // namespace
}  // namespace server
