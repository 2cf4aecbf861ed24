#include "support/http_test_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <utility>

namespace testing_support {

HttpTestServer::HttpTestServer(std::vector<std::string> keys, server::http::HttpOptions options,
                               server::core::BatcherConfig batcher)
    : HttpTestServer(HttpTestSetup{std::move(keys), options, batcher, {}, "test-model", {}}) {}

HttpTestServer::HttpTestServer(HttpTestSetup setup)
    : core_(std::make_unique<CoreService>(setup.batcher, setup.limits)),
      keys_(std::move(setup.keys)) {
  core_->SetHeads(std::move(setup.heads));
  setup.options.host = "127.0.0.1";
  setup.options.port = 0;
  served_ = core_->Served(setup.model_name, &keys_);
  auto server = server::http::HttpServer::Start(
      setup.options, served_.get(), server::core::SystemClock(), {core_->metrics().registry()});
  EXPECT_TRUE(server.ok()) << server.status();
  if (server.ok()) server_ = *std::move(server);
}

HttpTestServer::~HttpTestServer() {
  core_->backend().Release();
  // As the server stops: the core drains first, so that no batcher thread is
  // still inside posting an answer to the adapter's thread pool when the
  // adapter is destroyed (TSan saw the pool destroyed under such a post).
  core_->batcher().Shutdown();
  core_->batcher().Drain(std::chrono::seconds(10));
  server_.reset();
}

HttpResponse HttpTestServer::Call(const std::string& method, const std::string& path,
                                  const std::string& body, const std::string& headers) {
  HttpTestConnection connection(port());
  EXPECT_TRUE(connection.connected());
  absl::StatusOr<HttpResponse> response = connection.Request(method, path, body, headers);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : HttpResponse{};
}

bool HttpTestServer::MetricsShow(const std::string& line) {
  for (int i = 0; i < 500; ++i) {
    const HttpResponse metrics = Call("GET", "/metrics");
    EXPECT_EQ(metrics.status, 200);
    if (metrics.body.find(line) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int HttpTestServer::MetricValue(const std::string& name) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    HttpTestConnection connection(port());
    absl::StatusOr<HttpResponse> metrics = connection.Request("GET", "/metrics");
    if (!metrics.ok() || metrics->status != 200) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const size_t at = metrics->body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoi(metrics->body.substr(at + name.size() + 2));
  }
  return -1;
}

}  // namespace testing_support
