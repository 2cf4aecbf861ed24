#include "server/app/port_check.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace server {

absl::Status CheckPortFree(const std::string& host, int port, const std::string& flag) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (const int error = getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses);
      error != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve --host ", host, ": ", gai_strerror(error)));
  }
  absl::Status status = absl::OkStatus();
  const int fd = socket(addresses->ai_family, addresses->ai_socktype, addresses->ai_protocol);
  if (fd < 0) {
    status = absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  } else {
    // As gRPC does: a port left in TIME_WAIT by a previous server is free.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, addresses->ai_addr, addresses->ai_addrlen) != 0) {
      const int error = errno;
      status = error == EADDRINUSE
                   ? absl::FailedPreconditionError(absl::StrCat("port ", port, " on ", host,
                                                                " is already in use (", flag, ")"))
                   : absl::FailedPreconditionError(absl::StrCat(
                         "cannot bind ", host, ":", port, " (", flag, "): ", std::strerror(error)));
    }
    close(fd);
  }
  freeaddrinfo(addresses);
  return status;
}

std::string HostPort(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return ipv6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

}  // namespace server
