// The HTTP/1.1 adapter: OpenAI's POST /v1/embeddings, GET /v1/models and GET
// /v1/models/{id}; text-embeddings-inference's POST /embed, /tokenize,
// /decode, GET /info, GET /health; and GET /metrics (routes.h lists them).
//
// Event-driven (Boost.Asio/Beast; server/http/README.md says why and how it
// was measured): `io_threads` event loops multiplex every connection (epoll),
// so an idle keep-alive connection or a slow upload holds no thread, only a
// socket and a few hundred bytes. A request reaches the handler threads
// (request_handler.h: JSON, tokenization, rendering) only once its body is
// complete; encode requests go to the same EncodeDispatcher as gRPC's and
// share its queue and batches. connection.h has each connection's phases,
// limits and timeouts.
#pragma once

#include <memory>
#include <vector>

#include <prometheus/collectable.h>

#include "absl/status/statusor.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/clock.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/http/http_options.h"

namespace server::http {

class HttpServer {
 public:
  // Listens and serves `models` (their keys off: no authentication). All
  // pointers must outlive the server. `collectables` are what /metrics
  // exports; the adapter's own metrics go into the first model's registry.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, const core::ServedModels* models, core::Clock* clock,
      std::vector<std::weak_ptr<prometheus::Collectable>> collectables);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // /health: 200 while serving, 503 otherwise (from the start of shutdown).
  void SetServing(bool serving);
  // Connections open now (the refused ones too, while they are answered).
  int open_connections() const;

  // Stops accepting and closes idle connections and requests still being
  // received; waits for every request with the core to be answered and its
  // answer sent (Connection: close), then ends the threads.
  void Stop();

 private:
  struct Impl;
  HttpServer();

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace server::http
