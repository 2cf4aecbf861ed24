// libFuzzer target: the bytes as everything one client sends on one
// connection to the real HTTP adapter (server/http: Boost.Beast's parser with
// the server's limits, each connection phase, pipelining, the request handler
// and the core with its batcher and engine, on a small random model), over
// loopback; the client then half-closes and reads until the server closes.
// Checks: no crash or sanitizer report; the server closes every connection
// once the client has stopped sending (no hang); what it sends back is a
// sequence of well-framed HTTP/1.1 responses (status line, Content-Length
// matching the body), 1xx..5xx. Beast is header-only, so its parser is built
// with this build's sanitizers.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "fuzz_service.h"
#include "fuzz_util.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/batcher.h"
#include "server/core/batching/clock.h"
#include "server/core/batching/engine_backend.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/http/http_server.h"

namespace {

// The core and the HTTP adapter, once per process.
struct Adapter {
  explicit Adapter(const fuzz::Service& service)
      : metrics(server::core::BatcherConfig{}, server::core::ModelInfoLabels{}),
        backend(service.model.encoder.get()),
        batcher(server::core::BatcherConfig{}, &backend, server::core::SystemClock(), &metrics),
        dispatcher(service.inputs.get(), &batcher, &metrics) {
    batcher.Start();
    server::http::HttpOptions options;
    options.host = "127.0.0.1";
    options.io_threads = 1;
    options.threads = 1;
    options.max_header_bytes = 4096;
    options.max_body_bytes = 65536;
    // Short, so that a request the client never finishes costs little.
    options.header_timeout = std::chrono::milliseconds(500);
    options.body_timeout = std::chrono::milliseconds(500);
    served = std::make_unique<server::core::ServedModels>(
        std::vector<server::core::ModelRoute>{
            {&dispatcher, &metrics,
             server::core::DescribeModel(service.model, server::core::RequestLimits{},
                                         server::core::BatcherConfig{})}},
        &keys);
    auto started = server::http::HttpServer::Start(
        options, served.get(), server::core::SystemClock(), {metrics.registry()});
    if (!started.ok()) fuzz::Fail("the HTTP server did not start");
    http = *std::move(started);
  }

  server::core::ServerMetrics metrics;
  server::core::EngineBackend backend;
  server::core::Batcher batcher;
  server::core::EncodeDispatcher dispatcher;
  server::core::ApiKeys keys;
  std::unique_ptr<server::core::ServedModels> served;
  std::unique_ptr<server::http::HttpServer> http;
};

// A connection to the server. Thousands a second leave the client's ports
// in TIME_WAIT unless closed with a reset (Close); a connect that still
// finds no free local port (EADDRNOTAVAIL, EAGAIN) is the client's own
// shortage and is retried, up to about a second. libFuzzer's SIGALRM (its
// -timeout check, every timeout / 2 + 1 s) can interrupt a connect, which
// then completes in the background: wait for it. Any other failure (the
// server refusing, say) fails the run, naming the error.
int Connect(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int attempt = 0;; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fuzz::Fail(("cannot make a socket: " + std::string(strerror(errno))).c_str());
    int error = 0;
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) error = errno;
    if (error == EINTR) {
      pollfd done{fd, POLLOUT, 0};
      int ready = 0;
      while ((ready = poll(&done, 1, 5000)) < 0 && errno == EINTR) {
      }
      socklen_t size = sizeof(error);
      if (ready <= 0) {
        error = ETIMEDOUT;
      } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
        error = errno;
      }
    }
    if (error == 0) return fd;
    close(fd);
    if ((error != EADDRNOTAVAIL && error != EAGAIN) || attempt == 100) {
      fuzz::Fail(("cannot connect to the HTTP server: " + std::string(strerror(error))).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Closes with a reset, so the client's port skips TIME_WAIT: by then the
// exchange is over (the server has closed, or the run fails anyway).
void Close(int fd) {
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  close(fd);
}

// Sends what it can of `bytes` (the server may close first), reading what
// comes back meanwhile so that neither side blocks; then half-closes and
// reads to the end. Fails when the server keeps the connection 10 s after.
std::string Exchange(int port, std::string_view bytes) {
  const int fd = Connect(port);
  std::string received;
  size_t sent = 0;
  bool half_closed = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    if (!half_closed && sent == bytes.size()) {
      shutdown(fd, SHUT_WR);
      half_closed = true;
    }
    pollfd ready{fd, static_cast<short>(POLLIN | (half_closed ? 0 : POLLOUT)), 0};
    if (std::chrono::steady_clock::now() > give_up) fuzz::Fail("the server did not close");
    if (poll(&ready, 1, 100) <= 0) continue;
    if (ready.revents & POLLIN) {
      char buffer[65536];
      const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
      if (got < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM
      if (got <= 0) break;                      // closed (or reset) by the server
      received.append(buffer, static_cast<size_t>(got));
    } else if (ready.revents & POLLOUT) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        sent = bytes.size();  // the server closed its end: stop sending
      } else {
        sent += static_cast<size_t>(n);
      }
    } else if (ready.revents & (POLLHUP | POLLERR)) {
      break;
    }
  }
  Close(fd);
  return received;
}

// Every response in `stream` is framed: a status line, headers, and as many
// body bytes as Content-Length says (1xx: none).
void CheckResponses(absl::string_view stream) {
  while (!stream.empty()) {
    const size_t head_end = stream.find("\r\n\r\n");
    fuzz::Check(head_end != absl::string_view::npos, "a response's head ends with CRLF CRLF");
    const std::vector<absl::string_view> lines = absl::StrSplit(stream.substr(0, head_end), "\r\n");
    fuzz::Check(absl::StartsWith(lines[0], "HTTP/1.1 "), "a status line starts HTTP/1.1");
    int status = 0;
    fuzz::Check(absl::SimpleAtoi(lines[0].substr(9, 3), &status) && status >= 100 && status < 600,
                "a status is 1xx..5xx");
    size_t length = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      const size_t colon = lines[i].find(':');
      if (colon != absl::string_view::npos &&
          absl::EqualsIgnoreCase(lines[i].substr(0, colon), "content-length")) {
        fuzz::Check(
            absl::SimpleAtoi(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)), &length),
            "Content-Length is a number");
      }
    }
    stream.remove_prefix(head_end + 4);
    fuzz::Check(stream.size() >= length, "the body is as long as Content-Length");
    stream.remove_prefix(length);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Adapter* const adapter = new Adapter(fuzz::GetService("fuzz_http_wire"));
  const std::string received =
      Exchange(adapter->http->port(), std::string_view(reinterpret_cast<const char*>(data), size));
  CheckResponses(absl::string_view(received));
  return 0;
}
