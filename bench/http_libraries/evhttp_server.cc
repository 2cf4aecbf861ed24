// libevent 2.1 evhttp candidate: one event-loop thread. A complete /embed
// request goes to the worker; its answer comes back to the loop through a
// queue and an eventfd, and the loop sends it. evhttp_set_timeout 5 s (one
// timeout: reading a request, writing, and an idle keep-alive connection),
// 8 KB of headers, 1 MB of body. A connection's close callback tells a
// request that waits that its client went away (NoteClientGone).
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "common.h"

static const std::string kAnswer = CannedAnswer();
static Worker worker;
static int wake_fd = -1;
static std::mutex answered_mutex;
static std::vector<evhttp_request*> answered;  // guarded by answered_mutex
static std::set<evhttp_connection*> waiting;   // loop thread only

static void SendAnswer(evhttp_request* request) {
  evhttp_connection* connection = evhttp_request_get_connection(request);
  if (connection != nullptr) waiting.erase(connection);
  evbuffer* body = evbuffer_new();
  evbuffer_add(body, kAnswer.data(), kAnswer.size());
  evhttp_add_header(evhttp_request_get_output_headers(request), "Content-Type", "application/json");
  // A request whose connection is gone is freed here, nothing is sent.
  evhttp_send_reply(request, 200, "OK", body);
  evbuffer_free(body);
}

static void OnWake(evutil_socket_t fd, short, void*) {
  uint64_t count;
  if (read(fd, &count, sizeof(count)) < 0) return;
  std::vector<evhttp_request*> ready;
  {
    std::lock_guard<std::mutex> lock(answered_mutex);
    ready.swap(answered);
  }
  for (evhttp_request* request : ready) SendAnswer(request);
}

static void OnClose(evhttp_connection* connection, void*) {
  if (waiting.erase(connection) > 0) NoteClientGone("evhttp");
}

static void Embed(evhttp_request* request, void*) {
  evhttp_connection* connection = evhttp_request_get_connection(request);
  waiting.insert(connection);
  evhttp_connection_set_closecb(connection, OnClose, nullptr);
  worker.Post([request] {
    {
      std::lock_guard<std::mutex> lock(answered_mutex);
      answered.push_back(request);
    }
    const uint64_t one = 1;
    if (write(wake_fd, &one, sizeof(one)) < 0) std::abort();
  });
}

static void Health(evhttp_request* request, void*) {
  evhttp_send_reply(request, 200, "OK", nullptr);
}

int main(int argc, char** argv) {
  event_base* base = event_base_new();
  wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  event* wake = event_new(base, wake_fd, EV_READ | EV_PERSIST, OnWake, nullptr);
  event_add(wake, nullptr);
  evhttp* http = evhttp_new(base);
  evhttp_set_timeout(http, 5);
  evhttp_set_max_headers_size(http, 8 * 1024);
  evhttp_set_max_body_size(http, 1024 * 1024);
  evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
  evhttp_set_cb(http, "/embed", Embed, nullptr);
  evhttp_set_cb(http, "/health", Health, nullptr);
  if (evhttp_bind_socket(http, "127.0.0.1",
                         static_cast<uint16_t>(argc > 1 ? std::atoi(argv[1]) : 18083)) != 0) {
    std::fprintf(stderr, "evhttp: cannot bind\n");
    return 1;
  }
  event_base_dispatch(base);
}
