#include "server/app/metrics_endpoint.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/app/port_check.h"

namespace server {
namespace {

// Opens and closes a TCP connection to host:port (a wildcard host: the
// loopback address), to wake a thread polling that listening socket.
void Knock(const std::string& host, int port) {
  std::string target = host;
  if (target == "0.0.0.0" || target.empty()) target = "127.0.0.1";
  if (target == "::" || target == "[::]") target = "::1";
  if (target.size() > 2 && target.front() == '[' && target.back() == ']') {
    target = target.substr(1, target.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  if (getaddrinfo(target.c_str(), std::to_string(port).c_str(), &hints, &addresses) != 0) return;
  const int fd = socket(addresses->ai_family, addresses->ai_socktype, addresses->ai_protocol);
  if (fd >= 0) {
    connect(fd, addresses->ai_addr, addresses->ai_addrlen);  // refused once closed: fine
    close(fd);
  }
  freeaddrinfo(addresses);
}

}  // namespace

void MetricsEndpoint::Stop() {
  if (exposer_ == nullptr) return;
  std::atomic<bool> stopped{false};
  std::thread stopper([this, &stopped] {
    exposer_.reset();  // CivetWeb's mg_stop: sets its stop flag, waits for its threads
    stopped = true;
  });
  // Knock until the listening thread has seen the flag (the first knock may
  // come before the flag is set, and be served as a connection).
  for (int knocks = 0; knocks < 200 && !stopped; ++knocks) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!stopped) Knock(host_, port_);
  }
  stopper.join();
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
