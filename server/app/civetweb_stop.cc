#include "server/app/civetweb_stop.h"

#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace server {
namespace {

// Connects to host:port and closes at once, on every address of the host.
// Each attempt waits at most 100 ms: a listener that has stopped accepting
// (its backlog full) must not hold the stop.
void Knock(const std::string& host, int port) {
  std::string target = host;
  if (target.empty() || target == "0.0.0.0") target = "127.0.0.1";
  if (target == "::" || target == "[::]") target = "::1";
  if (target.size() > 2 && target.front() == '[' && target.back() == ']') {
    target = target.substr(1, target.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  if (getaddrinfo(target.c_str(), std::to_string(port).c_str(), &hints, &addresses) != 0) return;
  for (const addrinfo* address = addresses; address != nullptr; address = address->ai_next) {
    const int fd =
        socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK, address->ai_protocol);
    if (fd < 0) continue;
    // Refused once the listener is closed: fine.
    if (connect(fd, address->ai_addr, address->ai_addrlen) != 0 && errno == EINPROGRESS) {
      pollfd connected{fd, POLLOUT, 0};
      poll(&connected, 1, 100);
    }
    close(fd);
  }
  freeaddrinfo(addresses);
}

// The local port of a connected (accepted) TCP socket; 0 for anything else:
// not a socket, a listening socket, not TCP over IP.
int AcceptedLocalPort(int fd) {
  int value = 0;
  socklen_t length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) != 0 || value != SOCK_STREAM) return 0;
  length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0 || value != 0) return 0;
  sockaddr_storage address{};
  length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return 0;
}

// shutdown(SHUT_RD) on every socket of this process accepted on `port`. Our
// own outgoing connections (the knocks) have an ephemeral local port.
void EndReading(int port) {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return;
  const int own = dirfd(fds);
  while (const dirent* entry = readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    if (AcceptedLocalPort(static_cast<int>(fd)) == port) shutdown(static_cast<int>(fd), SHUT_RD);
  }
  closedir(fds);
}

}  // namespace

void StopCivetWebPromptly(const std::string& host, int port, const std::function<void()>& stop) {
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    stop();
    stopped = true;
  });
  // Until the stop is through: the first rounds may come before mg_stop has
  // set its flag, and a connection may arrive in between.
  for (int round = 0; round < 500 && !stopped; ++round) {
    EndReading(port);
    Knock(host, port);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stopper.join();
}

}  // namespace server
