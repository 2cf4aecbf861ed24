#include "server/http/http_message.h"

#include "absl/strings/str_cat.h"
#include "server/http/http_errors.h"

namespace server::http {

std::string ReplyHead(const HttpReply& reply, bool close, bool keep_alive_10) {
  std::string bytes =
      absl::StrCat("HTTP/1.1 ", reply.status, " ", ReasonPhrase(reply.status), "\r\n");
  if (reply.content_type != nullptr) {
    absl::StrAppend(&bytes, "Content-Type: ", reply.content_type, "\r\n");
  }
  absl::StrAppend(&bytes, "Content-Length: ", reply.body.size(), "\r\n");
  if (!reply.allow.empty()) absl::StrAppend(&bytes, "Allow: ", reply.allow, "\r\n");
  if (!reply.windows.empty()) absl::StrAppend(&bytes, "X-Windows: ", reply.windows, "\r\n");
  // Overload is brief: the queue drains in a batch or two.
  if (reply.status == 429 || reply.status == 503) bytes += "Retry-After: 1\r\n";
  if (reply.status == 401) bytes += "WWW-Authenticate: Bearer\r\n";
  if (close) {
    bytes += "Connection: close\r\n";
  } else if (keep_alive_10) {
    bytes += "Connection: keep-alive\r\n";
  }
  bytes += "\r\n";
  return bytes;
}

}  // namespace server::http
