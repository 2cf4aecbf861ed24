// cpp-httplib candidate: its thread pool (one thread per keep-alive connection).
#define CPPHTTPLIB_THREAD_POOL_COUNT 64
#include <httplib.h>

#include <cstdlib>

#include "common.h"

int main(int argc, char** argv) {
  const std::string answer = CannedAnswer();
  httplib::Server server;
  server.Post("/embed", [&](const httplib::Request&, httplib::Response& response) {
    response.set_content(answer, "application/json");
  });
  server.listen("127.0.0.1", argc > 1 ? std::atoi(argv[1]) : 18081);
}
