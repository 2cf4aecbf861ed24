#include "support/test_server.h"

#include <gtest/gtest.h>

namespace testing_support {

server::ServerConfig TestServerConfig(const std::string& model_dir) {
  server::ServerConfig config;
  config.model_dir = model_dir;
  config.host = "127.0.0.1";
  config.port = 0;
  config.metrics_port = 0;
  // HTTP is on by default, on 8080: tests running in parallel would collide
  // there. A test of the HTTP API sets 0 (any free port).
  config.http_port = std::nullopt;
  config.threads = 2;
  config.batcher.max_batch_tokens = 4096;
  config.shutdown_grace = std::chrono::seconds(5);
  return config;
}

std::unique_ptr<server::EncoderServer> StartServer(const server::ServerConfig& config,
                                                   server::core::BatcherObserver* observer) {
  auto server = server::EncoderServer::Start(config, observer);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TestServer::TestServer(const std::function<void(server::ServerConfig&)>& configure) {
  server::ServerConfig config = TestServerConfig(model_.dir());
  if (configure) configure(config);
  server_ = StartServer(config);
}

MultiModelTestServer::MultiModelTestServer(
    const std::vector<Spec>& specs, const std::function<void(server::ServerConfig&)>& configure) {
  server::ServerConfig config = TestServerConfig("");
  config.model_dir.clear();
  config.http_port = 0;
  for (const Spec& spec : specs) {
    models_.emplace_back(spec.name, std::make_unique<TestModel>(spec.hidden, spec.seed));
    config.models.push_back({spec.name, models_.back().second->dir()});
  }
  if (configure) configure(config);
  server_ = StartServer(config);
}

TestModel& MultiModelTestServer::model(const std::string& name) {
  for (auto& [served, model] : models_) {
    if (served == name) return *model;
  }
  ADD_FAILURE() << "no model " << name;
  return *models_.front().second;
}

TestServer* TestServerSuite::suite_server_ = nullptr;

void TestServerSuite::StartSuiteServer(
    const std::function<void(server::ServerConfig&)>& configure) {
  delete suite_server_;
  suite_server_ = new TestServer(configure);
}

void TestServerSuite::TearDownTestSuite() {
  delete suite_server_;
  suite_server_ = nullptr;
}

void TestServerSuite::SetUp() {
  ASSERT_TRUE(suite_server_ != nullptr && suite_server_->ok())
      << "the suite's server did not start";
}

std::shared_ptr<grpc::Channel> Connect(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(grpc::ClientContext* context, std::chrono::seconds timeout) {
  context->set_deadline(std::chrono::system_clock::now() + timeout);
}

grpc::Status Encode(encoder::v1::Encoder::Stub& stub, const encoder::v1::EncodeRequest& request,
                    encoder::v1::EncodeResponse* response, std::chrono::seconds timeout) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout);
  return stub.Encode(&context, request, response);
}

}  // namespace testing_support
