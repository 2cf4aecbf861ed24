// CivetWeb candidate: thread per connection, keep-alive, TCP_NODELAY.
#include <civetweb.h>

#include <unistd.h>
#include <csignal>
#include <string>

#include "common.h"

static const std::string kAnswer = CannedAnswer();

static int Handle(mg_connection* c, void*) {
  char buffer[16384];
  while (mg_read(c, buffer, sizeof(buffer)) > 0) {
  }
  mg_response_header_start(c, 200);
  mg_response_header_add(c, "Content-Type", "application/json", -1);
  const std::string length = std::to_string(kAnswer.size());
  mg_response_header_add(c, "Content-Length", length.c_str(), -1);
  mg_response_header_send(c);
  mg_write(c, kAnswer.data(), kAnswer.size());
  return 200;
}

int main(int argc, char** argv) {
  const char* options[] = {"listening_ports",
                           argc > 1 ? argv[1] : "18080",
                           "num_threads",
                           "64",
                           "enable_keep_alive",
                           "yes",
                           "tcp_nodelay",
                           "1",
                           nullptr};
  mg_callbacks callbacks{};
  mg_context* context = mg_start(&callbacks, nullptr, options);
  mg_set_request_handler(context, "/embed", Handle, nullptr);
  pause();
  mg_stop(context);
}
