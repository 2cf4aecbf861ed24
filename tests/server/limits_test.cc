// The server's limits over a real socket on 127.0.0.1: message size (gRPC's
// RESOURCE_EXHAUSTED), tokens per request (INVALID_ARGUMENT naming the input),
// concurrent streams per connection (further streams wait), idle connections
// (closed), and the validation of each flag.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "server/app/encoder_server.h"
#include "server/app/server_config.h"
#include "support/net.h"
#include "support/test_server.h"

namespace server {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using std::chrono::seconds;
using testing_support::Connect;
using testing_support::Encode;
using testing_support::StartServer;
using testing_support::TestModel;
using testing_support::TestServerConfig;

std::chrono::system_clock::time_point In(seconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

// `count` ids: [CLS] filler... [SEP] (the test model's vocabulary).
encoder::v1::Input Ids(int count) {
  encoder::v1::Input input;
  auto* ids = input.mutable_token_ids()->mutable_ids();
  ids->Add(2);
  for (int i = 1; i + 1 < count; ++i) ids->Add(40 + i % 50);
  ids->Add(3);
  return input;
}

EncodeRequest Request(const std::vector<encoder::v1::Input>& inputs, bool truncate = false) {
  EncodeRequest request;
  for (const encoder::v1::Input& input : inputs) *request.add_inputs() = input;
  request.set_truncate(truncate);
  return request;
}

class LimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new TestModel(); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static TestModel* model_;
};

TestModel* LimitsTest::model_ = nullptr;

TEST_F(LimitsTest, AMessageOverMaxReceiveMessageBytesIsResourceExhaustedAndOthersAreServed) {
  ServerConfig config = TestServerConfig(model_->dir());
  config.max_receive_message_bytes = 16384;
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<grpc::Channel> channel = Connect(server->port());
  auto stub = encoder::v1::Encoder::NewStub(channel);

  std::string words;
  while (words.size() < 20000) words += "word ";
  encoder::v1::Input big;
  big.set_text(words);  // under --max-text-bytes (65536), over the message limit
  EncodeResponse response;
  grpc::Status status = Encode(*stub, Request({big}, /*truncate=*/true), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();

  // On a stream: the stream ends with it.
  {
    grpc::ClientContext context;
    context.set_deadline(In(seconds(30)));
    auto stream = stub->EncodeStream(&context);
    stream->Write(Request({big}, /*truncate=*/true));
    stream->WritesDone();
    while (stream->Read(&response)) {
    }
    status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  }

  // The same connection and a new one still serve, a message under the limit included.
  encoder::v1::Input under;
  under.set_text(words.substr(0, 15000));
  status = Encode(*stub, Request({under}, /*truncate=*/true), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs(0).tokens(), TestModel::kMaxLength);
  auto other = encoder::v1::Encoder::NewStub(Connect(server->port()));
  status = Encode(*other, Request({Ids(5)}), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs(0).tokens(), 5);
}

TEST_F(LimitsTest, TokensOverMaxTokensPerRequestAreInvalidArgumentNamingTheInput) {
  ServerConfig config = TestServerConfig(model_->dir());
  config.limits.max_tokens_per_request = 20;
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  auto stub = encoder::v1::Encoder::NewStub(Connect(server->port()));

  EncodeResponse response;
  grpc::Status status = Encode(*stub, Request({Ids(8), Ids(8), Ids(8)}), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "input 2: the request reaches 24 tokens here, more than the limit of 20 tokens per "
            "request (--max-tokens-per-request)");

  // Exactly at the limit is fine.
  status = Encode(*stub, Request({Ids(8), Ids(8), Ids(4)}), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outputs_size(), 3);

  // Tokens are counted after tokenization and truncation: a text of 100
  // words truncated to the model's 64 tokens.
  std::string words;
  for (int i = 0; i < 100; ++i) words += "word ";
  encoder::v1::Input text;
  text.set_text(words);
  status = Encode(*stub, Request({Ids(2), text}, /*truncate=*/true), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "input 1: the request reaches " + std::to_string(2 + TestModel::kMaxLength) +
                " tokens here, more than the limit of 20 tokens per request "
                "(--max-tokens-per-request)");

  // On a stream, per message: the one over the limit gets its error, the
  // stream goes on.
  grpc::ClientContext context;
  context.set_deadline(In(seconds(30)));
  auto stream = stub->EncodeStream(&context);
  EncodeRequest over = Request({Ids(15), Ids(15)});
  over.set_id("over");
  EncodeRequest fine = Request({Ids(15)});
  fine.set_id("fine");
  ASSERT_TRUE(stream->Write(over));
  ASSERT_TRUE(stream->Write(fine));
  ASSERT_TRUE(stream->WritesDone());
  int answered = 0;
  while (stream->Read(&response)) {
    ++answered;
    if (response.id() == "over") {
      EXPECT_EQ(response.error().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_EQ(response.error().message(),
                "input 1: the request reaches 30 tokens here, more than the limit of 20 tokens "
                "per request (--max-tokens-per-request)");
    } else {
      EXPECT_EQ(response.id(), "fine");
      EXPECT_FALSE(response.has_error()) << response.error().message();
      EXPECT_EQ(response.outputs_size(), 1);
    }
  }
  status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answered, 2);
}

// A stream with one request answered, left open.
struct OpenStream {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<EncodeRequest, EncodeResponse>> stream;

  bool Open(encoder::v1::Encoder::Stub* stub, const std::string& id) {
    context.set_deadline(In(seconds(60)));
    stream = stub->EncodeStream(&context);
    EncodeRequest request = Request({Ids(4)});
    request.set_id(id);
    EncodeResponse response;
    return stream->Write(request) && stream->Read(&response) && response.id() == id &&
           !response.has_error();
  }
  grpc::Status Close() {
    stream->WritesDone();
    EncodeResponse response;
    while (stream->Read(&response)) {
    }
    return stream->Finish();
  }
};

TEST_F(LimitsTest, StreamsBeyondMaxConcurrentStreamsWaitForAFreeSlotAndAllComplete) {
  ServerConfig config = TestServerConfig(model_->dir());
  config.max_concurrent_streams = 2;
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<grpc::Channel> channel = Connect(server->port());  // one connection
  auto stub = encoder::v1::Encoder::NewStub(channel);
  // A first call: the connection is up and the client has the server's
  // SETTINGS (with the limit) before the streams open.
  EncodeResponse response;
  ASSERT_TRUE(Encode(*stub, Request({Ids(4)}), &response).ok());

  OpenStream first, second;
  ASSERT_TRUE(first.Open(stub.get(), "first"));
  ASSERT_TRUE(second.Open(stub.get(), "second"));

  // The third stream on the same connection: opening it blocks until a slot
  // frees (the client's transport queues it), so it runs on its own thread.
  grpc::ClientContext third_context;
  third_context.set_deadline(In(seconds(60)));
  std::future<grpc::Status> third = std::async(std::launch::async, [&] {
    auto stream = stub->EncodeStream(&third_context);
    EncodeRequest request = Request({Ids(6)});
    request.set_id("third");
    stream->Write(request);
    stream->WritesDone();
    EncodeResponse answer;
    int answers = 0;
    while (stream->Read(&answer)) {
      EXPECT_EQ(answer.id(), "third");
      EXPECT_FALSE(answer.has_error()) << answer.error().message();
      ++answers;
    }
    EXPECT_EQ(answers, 1);
    return stream->Finish();
  });
  // While two streams are open it is not answered. (Waiting longer could
  // only make this pass more surely; it cannot fail when the limit holds.)
  EXPECT_EQ(third.wait_for(seconds(2)), std::future_status::timeout)
      << "a third stream ran beside two open ones with --max-concurrent-streams 2";

  // Closing one frees its slot: the third completes, and so do the others.
  grpc::Status status = first.Close();
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(third.wait_for(seconds(60)), std::future_status::ready);
  status = third.get();
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  status = second.Close();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(LimitsTest, AnIdleConnectionIsClosedAfterMaxConnectionIdle) {
  ServerConfig config = TestServerConfig(model_->dir());
  config.max_connection_idle = std::chrono::seconds(1);
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<grpc::Channel> channel = Connect(server->port());
  auto stub = encoder::v1::Encoder::NewStub(channel);
  EncodeResponse response;
  ASSERT_TRUE(Encode(*stub, Request({Ids(4)}), &response).ok());
  ASSERT_EQ(channel->GetState(false), GRPC_CHANNEL_READY);

  // The server sends GOAWAY once the connection has had no call for 1 s;
  // the client's channel leaves READY (the bound is only a safety net: with
  // gRPC's default of never, this would fail).
  EXPECT_TRUE(channel->WaitForStateChange(GRPC_CHANNEL_READY, In(seconds(30))))
      << "the idle connection was not closed";
  EXPECT_NE(channel->GetState(false), GRPC_CHANNEL_READY);

  // A new call reconnects.
  EXPECT_TRUE(Encode(*stub, Request({Ids(4)}), &response).ok());
}

TEST_F(LimitsTest, ASilentConnectionIsClosedAfterTheHandshakeTimeout) {
  ServerConfig config = TestServerConfig(model_->dir());
  config.handshake_timeout = std::chrono::milliseconds(300);
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  // A TCP connection that sends no HTTP/2 preface: gRPC's default would keep
  // it for 120 s; the read times out after 30 s if the server never closes it.
  const int silent = testing_support::ConnectLoopback(server->port(), 30);
  ASSERT_GE(silent, 0);
  // The server's own SETTINGS come first; then the end of the stream.
  char bytes[256];
  ssize_t got = 0;
  while ((got = recv(silent, bytes, sizeof(bytes), 0)) > 0) {
  }
  EXPECT_TRUE(got == 0 || errno == ECONNRESET) << "still open after 30 s: " << strerror(errno);
  close(silent);
  // Working clients are served all along.
  auto stub = encoder::v1::Encoder::NewStub(Connect(server->port()));
  EncodeResponse response;
  EXPECT_TRUE(Encode(*stub, Request({Ids(4)}), &response).ok());
}

TEST(LimitsConfigTest, DefaultsAndValidationNameTheFlag) {
  const ServerConfig defaults;
  EXPECT_EQ(defaults.max_receive_message_bytes, 0);  // derived:
  // 64 inputs x (2 x 65536 + 32) + 10 x 16384 + 4096.
  EXPECT_EQ(MaxReceiveMessageBytes(defaults), 64 * (2 * 65536 + 32) + 10 * 16384 + 4096);
  ServerConfig explicit_limit = defaults;
  explicit_limit.max_receive_message_bytes = 16384;
  EXPECT_EQ(MaxReceiveMessageBytes(explicit_limit), 16384);
  ServerConfig huge = defaults;
  huge.limits.max_inputs_per_request = 1 << 20;
  huge.limits.max_text_bytes = int64_t{1} << 30;
  EXPECT_EQ(MaxReceiveMessageBytes(huge), 2147483647);
  EXPECT_EQ(defaults.limits.max_tokens_per_request, 16384);
  EXPECT_EQ(defaults.max_concurrent_streams, 256);
  EXPECT_EQ(defaults.max_connection_idle, std::chrono::minutes(5));
  EXPECT_EQ(defaults.handshake_timeout, std::chrono::seconds(10));

  ServerConfig config = TestServerConfig("/some/model");
  ASSERT_TRUE(ValidateServerConfig(config).ok());
  const auto error = [](const ServerConfig& bad) {
    return std::string(ValidateServerConfig(bad).message());
  };
  ServerConfig bad = config;
  bad.max_receive_message_bytes = 100;
  EXPECT_EQ(error(bad),
            "--max-receive-message-bytes must be 0 (derived) or in 1024..2147483647 (got 100)");
  bad.max_receive_message_bytes = int64_t{1} << 31;
  EXPECT_EQ(error(bad),
            "--max-receive-message-bytes must be 0 (derived) or in 1024..2147483647 (got "
            "2147483648)");
  bad = config;
  bad.limits.max_tokens_per_request = 0;
  EXPECT_EQ(error(bad), "--max-tokens-per-request must be positive (got 0)");
  bad = config;
  bad.max_concurrent_streams = -1;
  EXPECT_EQ(error(bad), "--max-concurrent-streams must be positive (got -1)");
  bad = config;
  bad.max_connection_idle = std::chrono::milliseconds(0);
  EXPECT_EQ(error(bad), "--max-connection-idle must be positive and at most 596h (ms) (got 0)");
  bad.max_connection_idle = std::chrono::hours(1000);
  EXPECT_EQ(error(bad),
            "--max-connection-idle must be positive and at most 596h (ms) (got 3600000000)");
  bad = config;
  bad.handshake_timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(error(bad), "--handshake-timeout must be positive and at most 596h (ms) (got 0)");
}

// --isa is checked by name here (exit 2 for a bad flag); whether the CPU has
// the level is checked when the server starts (exit 1,
// reliability_startup_faults).
TEST(ServerConfigTest, IsaIsEmptyOrALevelName) {
  ServerConfig config = TestServerConfig("/some/model");
  EXPECT_TRUE(ValidateServerConfig(config).ok());  // empty: the CPU's best
  for (const char* level :
       {"scalar", "avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16"}) {
    config.isa = level;
    EXPECT_TRUE(ValidateServerConfig(config).ok()) << level;
  }
  config.isa = "AVX2";
  EXPECT_EQ(ValidateServerConfig(config).message(),
            "--isa: unknown instruction set \"AVX2\" (one of: scalar, avx2, avx2_vnni, avx512, "
            "avx512_vnni, avx512_bf16)");
}

// HTTP serves by default, on 8080 as TEI does; no port (the flag's 0) is off,
// 0 any free port, as for the other ports.
TEST(ServerConfigTest, HttpIsOnAt8080UnlessItHasNoPort) {
  const ServerConfig defaults;
  ASSERT_TRUE(defaults.http_port.has_value());
  EXPECT_EQ(*defaults.http_port, 8080);
  ServerConfig config = TestServerConfig("/some/model");
  for (const std::optional<int> port : {std::optional<int>(), std::optional<int>(0),
                                        std::optional<int>(8080), std::optional<int>(65535)}) {
    config.http_port = port;
    EXPECT_TRUE(ValidateServerConfig(config).ok()) << port.value_or(-1);
  }
  config.http_port = -1;
  EXPECT_EQ(ValidateServerConfig(config).message(),
            "--http-port must be in 0..65535 (0: off) (got -1)");
  config.port = 8080;
  config.http_port = 8080;
  EXPECT_EQ(ValidateServerConfig(config).message(),
            "--http-port must differ from --port and --metrics-port (got 8080)");
}

}  // namespace
}  // namespace server
