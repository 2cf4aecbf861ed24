// cpp-httplib candidate: its thread pool, 64 threads (one per keep-alive
// connection while it is open); the handler thread blocks until the worker
// (the batcher's stand-in) has answered. Read timeout 5 s, keep-alive
// timeout 60 s.
#include <httplib.h>

#include <cstdlib>
#include <future>

#include "common.h"

int main(int argc, char** argv) {
  const std::string answer = CannedAnswer();
  static Worker worker;
  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  server.set_tcp_nodelay(true);  // off by default: 40 ms delayed-ACK stalls
  server.set_read_timeout(5, 0);
  server.set_keep_alive_timeout(60);
  server.Post("/embed", [&](const httplib::Request&, httplib::Response& response) {
    std::promise<void> done;
    worker.Post([&] { done.set_value(); });
    done.get_future().get();
    response.set_content(answer, "application/json");
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response&) {});
  server.listen("127.0.0.1", argc > 1 ? std::atoi(argv[1]) : 18081);
}
