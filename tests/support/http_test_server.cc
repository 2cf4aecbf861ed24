#include "support/http_test_server.h"

#include <gtest/gtest.h>

#include <utility>

namespace testing_support {

HttpTestServer::HttpTestServer(std::vector<std::string> keys, server::http::HttpOptions options,
                               server::BatcherConfig batcher)
    : core_(std::make_unique<CoreService>(batcher)), keys_(std::move(keys)) {
  options.host = "127.0.0.1";
  options.port = 0;
  server::http::HttpModelInfo info{"test-model",          "float32", "cls", TestModel::kHidden,
                                   TestModel::kMaxLength, 16384,     64};
  auto server =
      server::http::HttpServer::Start(options, info, &core_->dispatcher(), &core_->metrics(),
                                      &keys_, server::SystemClock(), {core_->metrics().registry()});
  EXPECT_TRUE(server.ok()) << server.status();
  if (server.ok()) server_ = *std::move(server);
}

HttpTestServer::~HttpTestServer() {
  core_->backend().Release();
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

}  // namespace testing_support
