// The HTTP adapter in-process: HttpServer on 127.0.0.1 (a free port) over a
// CoreService (the real core on FakeBackend, so the numbers of a response
// are known without an engine), with API keys when given. What the HTTP
// adapter's tests call over a real socket.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/core/api/api_keys.h"
#include "server/http/http_server.h"
#include "support/core_service.h"
#include "support/http_test_client.h"

namespace testing_support {

// What differs between the tests' servers.
struct HttpTestSetup {
  std::vector<std::string> keys;  // none: no authentication
  server::http::HttpOptions options;
  server::core::BatcherConfig batcher = CoreService::DefaultConfig();
  server::core::RequestLimits limits;  // auto_truncate also goes to /info
  std::string model_name = "test-model";
  // The heads the model "has" (FakeBackend computes them), set before the
  // server's threads start.
  server::core::ModelHeads heads;
};

class HttpTestServer {
 public:
  // Starts the server; a start failure fails the current test and ok() is false.
  explicit HttpTestServer(HttpTestSetup setup);
  explicit HttpTestServer(std::vector<std::string> keys = {},
                          server::http::HttpOptions options = {},
                          server::core::BatcherConfig batcher = CoreService::DefaultConfig());
  // Releases a held backend, then stops the server before the core.
  ~HttpTestServer();
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  bool ok() const { return server_ != nullptr; }
  CoreService& core() { return *core_; }
  server::http::HttpServer& server() { return *server_; }
  int port() const { return server_->port(); }

  // One request on a connection of its own; a failed connection or an
  // unreadable response fails the current test (and returns status 0).
  HttpResponse Call(const std::string& method, const std::string& path,
                    const std::string& body = "", const std::string& headers = "");

  // Whether GET /metrics shows `line` within 5 s.
  bool MetricsShow(const std::string& line);
  // The value of an unlabelled series in GET /metrics (retried for up to 4 s
  // while new connections are refused); -1 when absent.
  int MetricValue(const std::string& name);

 private:
  std::unique_ptr<CoreService> core_;
  server::core::ApiKeys keys_;
  std::unique_ptr<server::core::ServedModels> served_;
  std::unique_ptr<server::http::HttpServer> server_;
};

}  // namespace testing_support
