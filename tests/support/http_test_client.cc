#include "support/http_test_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "support/net.h"

namespace testing_support {

HttpTestConnection::HttpTestConnection(int port) : fd_(ConnectLoopback(port)) {}

HttpTestConnection::~HttpTestConnection() {
  if (fd_ >= 0) close(fd_);
}

absl::Status HttpTestConnection::SendRaw(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return absl::UnavailableError("send failed");
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpResponse> HttpTestConnection::ReadResponse() {
  const auto fill = [this]() -> bool {
    char buffer[65536];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    buffered_.append(buffer, static_cast<size_t>(n));
    return true;
  };
  size_t header_end;
  while ((header_end = buffered_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) return absl::UnavailableError("connection closed before a response");
  }
  HttpResponse response;
  const std::vector<std::string> lines = absl::StrSplit(buffered_.substr(0, header_end), "\r\n");
  const std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &response.status)) {
    return absl::DataLossError(absl::StrCat("bad status line: ", lines[0]));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    response.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  size_t length = 0;
  if (auto it = response.headers.find("content-length"); it != response.headers.end()) {
    if (!absl::SimpleAtoi(it->second, &length)) return absl::DataLossError("bad Content-Length");
  }
  buffered_.erase(0, header_end + 4);
  while (buffered_.size() < length) {
    if (!fill()) return absl::UnavailableError("connection closed inside a body");
  }
  response.body = buffered_.substr(0, length);
  buffered_.erase(0, length);
  return response;
}

absl::Status HttpTestConnection::AwaitClose(std::chrono::milliseconds within) {
  const auto give_up = std::chrono::steady_clock::now() + within;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) return absl::DeadlineExceededError("still open");
    pollfd readable{fd_, POLLIN, 0};
    if (poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[65536];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return absl::OkStatus();  // closed (or reset)
    buffered_.append(buffer, static_cast<size_t>(n));
  }
}

void HttpTestConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::StatusOr<HttpResponse> HttpTestConnection::Request(const std::string& method,
                                                         const std::string& path,
                                                         const std::string& body,
                                                         const std::string& headers) {
  const std::string request = absl::StrCat(
      method, " ", path, " HTTP/1.1\r\nHost: localhost\r\n", headers,
      "Content-Type: application/json\r\nContent-Length: ", body.size(), "\r\n\r\n", body);
  if (absl::Status sent = SendRaw(request); !sent.ok()) return sent;
  return ReadResponse();
}

}  // namespace testing_support
