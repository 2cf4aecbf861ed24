#pragma once

#include <string>

#include "absl/status/status.h"

namespace server {

// Tries to bind host:port (and releases it at once), so that a port in use is
// reported in one clear line before the model loads, rather than by gRPC's
// own log after it. FAILED_PRECONDITION when the port is taken; the message
// names `flag` (e.g. "--metrics-port"), the flag that chose the port.
absl::Status CheckPortFree(const std::string& host, int port, const std::string& flag);

// "host:port", or "[host]:port" for an IPv6 address: how gRPC and CivetWeb
// take a listening address.
std::string HostPort(const std::string& host, int port);

}  // namespace server
