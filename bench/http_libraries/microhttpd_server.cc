// libmicrohttpd candidate: one internal thread on epoll
// (MHD_USE_EPOLL_INTERNAL_THREAD). A complete /embed request suspends its
// connection (MHD_suspend_connection) and goes to the worker, which resumes
// it (MHD_resume_connection) once the answer is ready; MHD then calls the
// handler again, which queues the answer. MHD_OPTION_CONNECTION_TIMEOUT 5 s
// (one inactivity timeout: a request's reads and an idle keep-alive
// connection), MHD_OPTION_CONNECTION_LIMIT 10000 (the default is
// FD_SETSIZE - 4), 32 KB of memory per connection (headers must fit).
// MHD_OPTION_NOTIFY_COMPLETED reports how each request ended
// (NoteClientGone on MHD_REQUEST_TERMINATED_CLIENT_ABORT).
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common.h"

static const std::string kAnswer = CannedAnswer();
static Worker worker;

struct Request {
  bool posted = false;
  std::atomic<bool> answered{false};
};

static MHD_Result Queue(MHD_Connection* connection, unsigned status, const std::string& body) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(response, "Content-Type", "application/json");
  const MHD_Result result = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return result;
}

static MHD_Result Access(void*, MHD_Connection* connection, const char* url, const char*,
                         const char*, const char*, size_t* upload_data_size, void** context) {
  if (*context == nullptr) {  // the headers are in; the body (if any) follows
    *context = new Request();
    return MHD_YES;
  }
  if (*upload_data_size > 0) {  // a piece of the body: read and discarded
    *upload_data_size = 0;
    return MHD_YES;
  }
  auto* request = static_cast<Request*>(*context);
  if (std::strcmp(url, "/health") == 0) return Queue(connection, MHD_HTTP_OK, "");
  if (request->answered) return Queue(connection, MHD_HTTP_OK, kAnswer);
  if (!request->posted) {
    request->posted = true;
    MHD_suspend_connection(connection);
    worker.Post([connection, request] {
      request->answered = true;
      MHD_resume_connection(connection);
    });
  }
  return MHD_YES;
}

static void Completed(void*, MHD_Connection*, void** context,
                      MHD_RequestTerminationCode termination) {
  auto* request = static_cast<Request*>(*context);
  if (termination == MHD_REQUEST_TERMINATED_CLIENT_ABORT && request != nullptr && request->posted &&
      !request->answered) {
    NoteClientGone("microhttpd");
  }
  delete request;
  *context = nullptr;
}

int main(int argc, char** argv) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(argc > 1 ? std::atoi(argv[1]) : 18084));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  MHD_Daemon* daemon = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, nullptr,
      nullptr, &Access, nullptr, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_CONNECTION_TIMEOUT, 5u,
      MHD_OPTION_CONNECTION_LIMIT, 10000u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, size_t{32 * 1024},
      MHD_OPTION_NOTIFY_COMPLETED, &Completed, nullptr, MHD_OPTION_END);
  if (daemon == nullptr) {
    std::fprintf(stderr, "microhttpd: cannot start\n");
    return 1;
  }
  pause();
  MHD_stop_daemon(daemon);
}
