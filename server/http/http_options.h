// What the HTTP adapter is configured with (server/app fills it from the
// --http-* flags), and what /info and /v1/models say of the model.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace server::http {

struct HttpOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port; HttpServer::port() says which
  // Event loops that accept, read and write every connection (epoll); they
  // never parse JSON or tokenize, so one idle or slow connection costs no thread.
  int io_threads = 2;
  // Threads that parse request bodies, tokenize and render answers.
  int threads = 4;
  // Connections open at once; past it a new connection is answered 503 and closed.
  int max_connections = 20000;
  int64_t max_header_bytes = 16 << 10;  // request line and headers; larger: 431
  int64_t max_body_bytes = 8 << 20;     // larger bodies: 413
  // A request without X-Request-Timeout-Ms gets this deadline.
  std::chrono::milliseconds default_timeout{30000};
  // From a connection's start, or a request's first byte, to the end of its
  // headers; past it 408 and the connection is closed.
  std::chrono::milliseconds header_timeout{10000};
  // From the end of the headers to the end of the body; past it 408 and the
  // connection is closed: a slow sender is never served after the fact.
  std::chrono::milliseconds body_timeout{30000};
  // A keep-alive connection without a request for this long is closed.
  std::chrono::milliseconds idle_timeout{60000};
  // Writing one response; a client that does not read it is closed.
  std::chrono::milliseconds write_timeout{30000};
};

}  // namespace server::http
