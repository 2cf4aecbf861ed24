// The whole server in-process (EncoderServer on 127.0.0.1, any free ports),
// its config for tests, and gRPC clients of it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "server/app/encoder_server.h"
#include "server/app/server_config.h"
#include "support/test_model.h"

namespace testing_support {

// What every in-process server of the tests runs with: 127.0.0.1, gRPC and
// metrics on any free port, HTTP off, 2 engine threads, 4096 tokens a batch, and a
// short shutdown grace (5 s), so that a test leaving a call open does not
// hold its teardown long. Tests set what else they need on the result.
server::ServerConfig TestServerConfig(const std::string& model_dir);

// EncoderServer::Start; a failure fails the current test and returns null.
std::unique_ptr<server::EncoderServer> StartServer(
    const server::ServerConfig& config, server::core::BatcherObserver* observer = nullptr);

// A TestModel and an EncoderServer on it, started at construction and
// stopped at destruction, before the model's directory goes.
class TestServer {
 public:
  // `configure` (may be empty) edits TestServerConfig(the model's directory)
  // before the start. A start failure fails the current test; ok() says.
  explicit TestServer(const std::function<void(server::ServerConfig&)>& configure = {});
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  bool ok() const { return server_ != nullptr; }
  TestModel& model() { return model_; }
  server::EncoderServer& server() { return *server_; }
  int port() const { return server_->port(); }
  int metrics_port() const { return server_->metrics_port(); }

 private:
  TestModel model_;
  std::unique_ptr<server::EncoderServer> server_;  // declared last: stopped first
};

// Several TestModels (distinct hidden sizes, so that a mix-up shows) served
// by one EncoderServer, each as --model NAME=DIR, with HTTP on (any free
// port); started at construction, stopped at destruction.
class MultiModelTestServer {
 public:
  struct Spec {
    std::string name;
    int hidden = TestModel::kHidden;
    uint64_t seed = 7;
  };
  explicit MultiModelTestServer(const std::vector<Spec>& specs,
                                const std::function<void(server::ServerConfig&)>& configure = {});
  MultiModelTestServer(const MultiModelTestServer&) = delete;
  MultiModelTestServer& operator=(const MultiModelTestServer&) = delete;

  bool ok() const { return server_ != nullptr; }
  // The model served as `name` (which must be one of the specs').
  TestModel& model(const std::string& name);
  server::EncoderServer& server() { return *server_; }

 private:
  std::vector<std::pair<std::string, std::unique_ptr<TestModel>>> models_;
  std::unique_ptr<server::EncoderServer> server_;  // declared last: stopped first
};

// A test suite sharing one TestServer, started before its first test and
// stopped after its last. A suite that configures its server defines its own
// SetUpTestSuite calling StartSuiteServer(configure); one that connects in
// SetUp calls TestServerSuite::SetUp() first.
class TestServerSuite : public ::testing::Test {
 protected:
  static void StartSuiteServer(const std::function<void(server::ServerConfig&)>& configure = {});
  static void SetUpTestSuite() { StartSuiteServer(); }
  static void TearDownTestSuite();
  // Fails the test (fatally) when the suite's server did not start.
  void SetUp() override;

  static TestServer& suite_server() { return *suite_server_; }

 private:
  static TestServer* suite_server_;
};

// A plaintext channel to 127.0.0.1:port without message size limits either way.
std::shared_ptr<grpc::Channel> Connect(int port);

// A deadline `timeout` from now.
void SetDeadline(grpc::ClientContext* context,
                 std::chrono::seconds timeout = std::chrono::seconds(30));

// One Encode call with a deadline `timeout` from now.
grpc::Status Encode(encoder::v1::Encoder::Stub& stub, const encoder::v1::EncodeRequest& request,
                    encoder::v1::EncodeResponse* response,
                    std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace testing_support
