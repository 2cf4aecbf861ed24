// cpp-httplib candidate: its thread pool, 64 threads (one per keep-alive
// connection while it is open).
#include <httplib.h>

#include <cstdlib>

#include "common.h"

int main(int argc, char** argv) {
  const std::string answer = CannedAnswer();
  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  server.set_tcp_nodelay(true);  // off by default: 40 ms delayed-ACK stalls
  server.Post("/embed", [&](const httplib::Request&, httplib::Response& response) {
    response.set_content(answer, "application/json");
  });
  server.listen("127.0.0.1", argc > 1 ? std::atoi(argv[1]) : 18081);
}
