// A minimal HTTP/1.1 client over one TCP connection, for the HTTP adapter's
// tests: it sends bytes exactly as given (so tests can send malformed,
// oversized or half-sent requests) and reads one response (Content-Length
// framing). Keeps the connection for the next request (keep-alive).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace testing_support {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class HttpTestConnection {
 public:
  explicit HttpTestConnection(int port);
  ~HttpTestConnection();
  HttpTestConnection(const HttpTestConnection&) = delete;
  HttpTestConnection& operator=(const HttpTestConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // Sends `bytes` as they are.
  absl::Status SendRaw(const std::string& bytes);
  // Reads one response; UNAVAILABLE when the server closed the connection.
  absl::StatusOr<HttpResponse> ReadResponse();
  // Waits up to `within` for the server to close the connection (what it sent
  // meanwhile stays readable by ReadResponse): OK once closed,
  // DEADLINE_EXCEEDED while still open.
  absl::Status AwaitClose(std::chrono::milliseconds within);
  // Closes this end now (a client that leaves).
  void Close();
  // A request with Content-Length, then its response. `headers` are whole
  // lines ending in \r\n.
  absl::StatusOr<HttpResponse> Request(const std::string& method, const std::string& path,
                                       const std::string& body = "",
                                       const std::string& headers = "");

 private:
  int fd_ = -1;
  std::string buffered_;  // read past the last response
};

}  // namespace testing_support
