// What the connections of one HttpServer share: the options, the request
// handler, the handler threads, the count of open connections (for
// --http-max-connections) and of requests with the handler (for the drain),
// and the register of live connections that Stop() closes. Owned by the
// server; outlives every connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "common/mutex.h"
#include "server/http/http_metrics.h"
#include "server/http/http_options.h"
#include "server/http/request_handler.h"

namespace server::http {

class Connection;

class ConnectionHub {
 public:
  // `metrics` must outlive the hub.
  ConnectionHub(const HttpOptions& options, HttpMetrics* metrics);

  const HttpOptions& options() const { return options_; }
  HttpMetrics& metrics() { return *metrics_; }
  RequestHandler& handler() { return *handler_; }
  void set_handler(std::unique_ptr<RequestHandler> handler) { handler_ = std::move(handler); }

  // Runs `work` on the handler threads.
  void Post(std::function<void()> work);
  // Waits for the handler threads' queued work to finish, then ends them.
  void JoinHandlerThreads() { workers_.join(); }

  // Live connections.
  void Add(const std::shared_ptr<Connection>& connection) ABSL_LOCKS_EXCLUDED(mu_);
  void Remove(const Connection* connection) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::shared_ptr<Connection>> Live() const ABSL_LOCKS_EXCLUDED(mu_);
  int open() const ABSL_LOCKS_EXCLUDED(mu_);

  // Requests handed to the handler and not yet answered to their connection.
  // False (nothing counted) once stopping: the request must not go.
  bool TryHandOver() ABSL_LOCKS_EXCLUDED(mu_);
  void RequestAnswered() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no request is with the handler.
  void AwaitNoRequests() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no connection is open, or `deadline`; whether none is.
  bool AwaitNoConnections(std::chrono::steady_clock::time_point deadline) ABSL_LOCKS_EXCLUDED(mu_);

  // From the start of Stop(): no request goes to the handler any more,
  // replies close their connection, idle ones close.
  bool stopping() const { return stopping_.load(); }
  void set_stopping() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const HttpOptions options_;
  HttpMetrics* const metrics_;
  std::unique_ptr<RequestHandler> handler_;
  boost::asio::thread_pool workers_;
  std::atomic<bool> stopping_{false};
  mutable common::Mutex mu_;
  common::CondVar changed_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> live_ ABSL_GUARDED_BY(mu_);
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace server::http
