#include "server/app/metrics_endpoint.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "server/app/civetweb_stop.h"
#include "server/app/port_check.h"

namespace server {

void MetricsEndpoint::Stop() {
  if (exposer_ == nullptr) return;
  // The exposer's destructor is CivetWeb's mg_stop.
  StopCivetWebPromptly(host_, port_, [this] { exposer_.reset(); });
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host, int port,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  const std::string address = HostPort(host, port);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // CivetWeb options: where to listen, and two request threads (scrapes are rare).
    exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address, "num_threads", "2"});
  } catch (const std::exception& error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot serve metrics on ", address, ": ", error.what()));
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot serve metrics on ", address));
  }
  for (const auto& collectable : collectables) exposer->RegisterCollectable(collectable);
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(exposer), host, ports.front()));
}

}  // namespace server
