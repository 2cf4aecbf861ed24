// CivetWeb candidate: thread per connection (64), keep-alive, TCP_NODELAY;
// the handler thread blocks until the worker (the batcher's stand-in) has
// answered. request_timeout_ms 5 s; keep_alive_timeout_ms 60 s (the
// server's --http-keep-alive default).
#include <civetweb.h>

#include <unistd.h>
#include <csignal>
#include <future>
#include <string>

#include "common.h"

static const std::string kAnswer = CannedAnswer();
static Worker worker;

static void Reply(mg_connection* c, int status, const std::string& body) {
  mg_response_header_start(c, status);
  mg_response_header_add(c, "Content-Type", "application/json", -1);
  const std::string length = std::to_string(body.size());
  mg_response_header_add(c, "Content-Length", length.c_str(), -1);
  mg_response_header_send(c);
  mg_write(c, body.data(), body.size());
}

static int Embed(mg_connection* c, void*) {
  char buffer[16384];
  while (mg_read(c, buffer, sizeof(buffer)) > 0) {
  }
  std::promise<std::string> answer;
  worker.Post([&answer] { answer.set_value(kAnswer); });
  Reply(c, 200, answer.get_future().get());
  return 200;
}

static int Health(mg_connection* c, void*) {
  Reply(c, 200, "");
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
                           "request_timeout_ms",
                           "5000",
                           "keep_alive_timeout_ms",
                           "60000",
                           nullptr};
  mg_callbacks callbacks{};
  mg_context* context = mg_start(&callbacks, nullptr, options);
  mg_set_request_handler(context, "/embed", Embed, nullptr);
  mg_set_request_handler(context, "/health", Health, nullptr);
  pause();
  mg_stop(context);
}
