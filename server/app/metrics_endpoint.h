// The HTTP endpoint Prometheus scrapes: GET /metrics on host:port, served by
// prometheus-cpp's Exposer (CivetWeb, two threads of its own).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "absl/status/statusor.h"

namespace server {

class MetricsEndpoint {
 public:
  // Listens on host:port (port 0: any free port, see port()) and serves the
  // collectables, which must outlive the endpoint. An error says which
  // address could not be bound.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& host, int port,
      const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

  int port() const { return port_; }

  // Stops serving and releases the port; the destructor does it too. Quick:
  // without CivetWeb's 2 s waits (StopCivetWebPromptly).
  void Stop();
  ~MetricsEndpoint() { Stop(); }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer, std::string host, int port)
      : exposer_(std::move(exposer)), host_(std::move(host)), port_(port) {}

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string host_;
  int port_ = 0;
};

}  // namespace server
