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

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer, int port)
      : exposer_(std::move(exposer)), port_(port) {}

  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace server
