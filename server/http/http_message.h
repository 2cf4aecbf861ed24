// An HTTP request as the adapter hands it to the request handler (complete:
// headers and body), and the reply the handler gives back. No socket, no
// library types: the handler is tested and fuzzed without a network.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace server::http {

struct HttpRequest {
  std::string method;
  std::string path;           // percent-decoded, without the query (routes.h DecodePath)
  std::string model;          // the query's model=NAME (GET /info, /health), or empty
  std::string authorization;  // the Authorization header, or empty
  std::optional<std::string> timeout_ms;  // the X-Request-Timeout-Ms header
  std::string body;
};

struct HttpReply {
  int status = 200;
  std::string body;
  // None for an empty body (TEI's /health answers 200 with nothing).
  const char* content_type = "application/json";
  bool close = false;   // end the connection after this reply (the body was not read in full)
  std::string allow;    // 405: the methods the path takes
  std::string windows;  // X-Windows (window mode, server/core/requests/long_inputs.h); empty: none
  absl::StatusCode code = absl::StatusCode::kOk;  // what the metrics count it as
};

// The head of `reply` on the wire: status line and headers, up to the blank
// line; its body follows as it is. `close` adds "Connection: close";
// `keep_alive_10` answers an HTTP/1.0 keep-alive request.
std::string ReplyHead(const HttpReply& reply, bool close, bool keep_alive_10 = false);

}  // namespace server::http
