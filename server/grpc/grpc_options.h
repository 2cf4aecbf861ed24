// What the gRPC listener is configured with (server/app fills it from
// ServerConfig, i.e. the --port, --tls-* and connection-limit flags).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "server/grpc/tls.h"

namespace server {

struct GrpcOptions {
  // host:port; port 0: any free port (GrpcServer::port() says which).
  std::string address = "0.0.0.0:50051";
  ServerTlsPem tls;  // no certificate: plaintext
  // Larger messages are refused by gRPC with RESOURCE_EXHAUSTED before the
  // service sees them.
  int64_t max_receive_message_bytes = 4 << 20;
  int max_concurrent_streams = 256;  // HTTP/2 streams per connection; more wait
  std::chrono::milliseconds max_connection_idle{300000};  // then GOAWAY and close
  // A connection's TLS and HTTP/2 handshake must end within this.
  std::chrono::milliseconds handshake_timeout{10000};
  // The server pings a connection quiet this long, and drops it when no
  // answer comes within keepalive_timeout.
  std::chrono::milliseconds keepalive_time{60000};
  std::chrono::milliseconds keepalive_timeout{20000};
  // Clients may ping this often while calls are open.
  std::chrono::milliseconds min_client_ping_interval{10000};
};

}  // namespace server
