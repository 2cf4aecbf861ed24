// The HTTP/1.1 adapter on CivetWeb (see server/http/README.md for why):
// OpenAI's POST /v1/embeddings, GET /v1/models and GET /v1/models/{id};
// text-embeddings-inference's POST /embed, /tokenize, /decode, GET /info,
// GET /health; and GET /metrics (routes.h lists them). Requests go to the
// same EncodeDispatcher as gRPC's, so they share
// the queue and batches. Each connection is served by one of `threads`
// threads (keep-alive: a connection keeps its thread between requests).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "absl/status/statusor.h"
#include "server/core/api_keys.h"
#include "server/core/clock.h"
#include "server/core/encode_dispatcher.h"
#include "server/core/metrics.h"

struct mg_context;
struct mg_connection;

namespace server::http {

struct HttpOptions {
  std::string host = "0.0.0.0";
  int port = 0;                      // 0: any free port; HttpServer::port() says which
  int threads = 64;                  // connections served at once; more wait in the listen backlog
  int64_t max_body_bytes = 4 << 20;  // larger bodies: 413
  // A request without X-Request-Timeout-Ms gets this deadline.
  std::chrono::milliseconds default_timeout{30000};
  // Reading a request (headers and body) and writing a response may take this
  // long; a slow or half-sent request is then dropped (its thread freed).
  std::chrono::milliseconds io_timeout{10000};
  std::chrono::milliseconds keep_alive_timeout{60000};  // an idle connection is closed
};

// What /info and /v1/models say.
struct HttpModelInfo {
  std::string name;
  std::string dtype;    // "float32" or "int8"
  std::string pooling;  // the model's default, e.g. "cls"
  int hidden_size = 0;
  int max_input_length = 0;
  int64_t max_batch_tokens = 0;
  int max_inputs_per_request = 0;
  bool auto_truncate = false;  // --auto-truncate, as /info reports it
};

class HttpServer {
 public:
  // All pointers must outlive the server. `keys` off: no authentication.
  // `collectables` are what /metrics exports.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, HttpModelInfo model, EncodeDispatcher* dispatcher,
      ServerMetrics* metrics, const ApiKeys* keys, Clock* clock,
      std::vector<std::weak_ptr<prometheus::Collectable>> collectables);
  ~HttpServer();  // Stop()

  int port() const { return port_; }
  // /health: 200 while serving, 503 otherwise (from the start of shutdown).
  void SetServing(bool serving) { serving_ = serving; }
  // Waits for every request being handled to be answered, then closes.
  void Stop();

  // CivetWeb's entry point (public for its C callback).
  int Handle(mg_connection* connection);

 private:
  HttpServer(const HttpOptions& options, HttpModelInfo model, EncodeDispatcher* dispatcher,
             ServerMetrics* metrics, const ApiKeys* keys, Clock* clock,
             std::vector<std::weak_ptr<prometheus::Collectable>> collectables);

  const HttpOptions options_;
  const HttpModelInfo model_;
  EncodeDispatcher* const dispatcher_;
  ServerMetrics* const metrics_;
  const ApiKeys* const keys_;
  Clock* const clock_;
  const std::vector<std::weak_ptr<prometheus::Collectable>> collectables_;
  mg_context* context_ = nullptr;
  int port_ = 0;
  std::atomic<bool> serving_{false};
};

}  // namespace server::http
