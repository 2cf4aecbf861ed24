// reliability-probe: small misbehaving or watchful clients for the reliability
// scripts (tests/reliability/*.sh), each bounded in time. Every subcommand
// prints plain lines on stdout for the scripts to check.
//
//   health-watch TARGET INTERVAL_MS MAX_SECONDS
//       Polls grpc.health.v1.Health/Check ("" service) on one channel every
//       INTERVAL_MS; prints "<ms since start> <STATUS>" at each change
//       (SERVING, NOT_SERVING, or "ERROR <CODE>: <message>"). Stops after
//       NOT_SERVING followed by 3 consecutive errors (the server is gone), or
//       after MAX_SECONDS. Last line: "polls <n>".
//   idle-connections HOST PORT N HOLD_SECONDS
//       Opens N TCP connections and sends nothing more: the odd ones send
//       the HTTP/2 client preface and an empty SETTINGS frame, answer the
//       server's SETTINGS with an ACK and then stay silent (an idle HTTP/2
//       client); the even ones send no byte at all (a bare TCP connection).
//       Prints "connected <n>" once they are open, holds them HOLD_SECONDS,
//       then "open <n>" (how many the server had not closed) and exits.
//   stream-no-read TARGET REQUESTS INPUTS WORDS HOLD_SECONDS
//       Opens EncodeStream and writes up to REQUESTS requests (INPUTS texts of
//       WORDS words each, pooling NONE so that responses are large), never
//       reading a response. Prints "written <k>" after HOLD_SECONDS (writes
//       block once HTTP/2 flow control stops them), then exits at once
//       without closing the stream: the connection simply goes away.
//   encode-sized TARGET INPUTS BYTES_PER_INPUT
//       One Encode call with INPUTS texts of BYTES_PER_INPUT bytes each;
//       prints "<CODE>: <message>" ("OK: <n> outputs" on success).
//   http-crowd HOST PORT IDLE STALLED REQUESTS [--server-pid PID]
//              [--stall-wait-seconds S] [--body JSON] [--path PATH]
//       A crowd on the HTTP port, then ordinary requests through it. IDLE
//       connections each GET /health once and then stay open and silent (a
//       client pool's idle keep-alive connections; at most 128 wait for their
//       answer at a time, all within 10 s); STALLED connections each send the
//       headers of a POST /embed announcing 100 bytes and only 10 of them (a
//       slowloris upload); then REQUESTS sequential requests, each on a new
//       connection (POST PATH, default /embed, with BODY, default
//       {"inputs":"hello world"}), each bounded by 30 s, latency from
//       connect() to the last byte (after 3 timeouts in a row the rest are
//       counted as "not_sent"). Then waits up to S (default 15) seconds
//       for the server to close the stalled connections. Prints one JSON
//       object: counts, the server's VmRSS before and 300 ms after the crowd
//       and kB per connection (with --server-pid), the requests' statuses and
//       latency percentiles, what the server answered each stalled connection
//       ("408", "none") and when it closed it (ms after its stall began),
//       when it closed idle ones (ms after their answer) and how many of
//       either were still open at the end.
//   grpc-crowd HOST PORT IDLE STALLED REQUESTS [--server-pid PID]
//              [--stall-wait-seconds S]
//       The same on the gRPC port: IDLE raw connections complete the HTTP/2
//       preface and SETTINGS exchange and stay silent; STALLED ones start an
//       Encode call (HEADERS, then a DATA frame with a gRPC message prefix
//       announcing 1000 bytes and only 10 of them) and stall; REQUESTS Encode
//       calls, each on a new channel (a new connection), deadline 30 s,
//       latency including connect. Same JSON (statuses are gRPC code names;
//       a stalled connection's answer lists the frame types the server sent
//       after its SETTINGS, e.g. "RST_STREAM+GOAWAY", or "none").
//   Both raise the open-files soft limit to the hard limit first.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

std::shared_ptr<grpc::Channel> Channel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

void PrintLine(const std::string& line) {
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

int HealthWatch(const std::string& target, int interval_ms, int max_seconds) {
  auto stub = grpc::health::v1::Health::NewStub(Channel(target));
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::seconds(max_seconds);
  std::string last;
  bool seen_not_serving = false;
  int errors_after = 0;
  int64_t polls = 0;
  while (Clock::now() < end) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&context, request, &response);
    ++polls;
    std::string state;
    if (status.ok()) {
      state = grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
      if (response.status() == grpc::health::v1::HealthCheckResponse::NOT_SERVING) {
        seen_not_serving = true;
      }
      errors_after = 0;
    } else {
      state = "ERROR " + CodeName(status.error_code()) + ": " + status.error_message();
      if (seen_not_serving && ++errors_after >= 3) {
        if (state != last) {
          PrintLine(std::to_string(
                        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)
                            .count()) +
                    " " + state);
        }
        break;
      }
    }
    if (state != last) {
      PrintLine(
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()) +
          " " + state);
      last = state;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  }
  PrintLine("polls " + std::to_string(polls));
  return 0;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Consumes the complete HTTP/2 frames at the start of `buffer` (9-byte
// header, then the payload), calling visit(type, flags) for each.
template <typename Visit>
void ConsumeFrames(std::string& buffer, Visit visit) {
  size_t at = 0;
  while (buffer.size() - at >= 9) {
    const auto* h = reinterpret_cast<const unsigned char*>(buffer.data() + at);
    const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
    if (buffer.size() - at < 9 + length) break;
    visit(static_cast<int>(h[3]), static_cast<int>(h[4]));
    at += 9 + length;
  }
  buffer.erase(0, at);
}

const std::string kSettingsAck("\x00\x00\x00\x04\x01\x00\x00\x00\x00", 9);

// Reads the server's first frames (up to 2 s) and ACKs its SETTINGS.
void AckServerSettings(int fd) {
  std::string buffer;
  const Clock::time_point end = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char chunk[4096];
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return;
    buffer.append(chunk, static_cast<size_t>(n));
    bool settings = false;
    ConsumeFrames(buffer, [&](int type, int flags) {
      if (type == 4 && (flags & 1) == 0) settings = true;
    });
    if (settings) {
      SendAll(fd, kSettingsAck);
      return;
    }
  }
}

int IdleConnections(const std::string& host, int port, int count, int hold_seconds) {
  const std::string preface = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                              std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      std::fprintf(stderr, "reliability-probe: socket: %s\n", std::strerror(errno));
      break;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &address.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      std::fprintf(stderr, "reliability-probe: connect: %s\n", std::strerror(errno));
      close(fd);
      break;
    }
    if (i % 2 == 1) {
      if (SendAll(fd, preface)) AckServerSettings(fd);
    }
    fds.push_back(fd);
  }
  PrintLine("connected " + std::to_string(fds.size()));
  std::this_thread::sleep_for(std::chrono::seconds(hold_seconds));
  // A connection the server closed reads as end-of-file (or an error) now;
  // an open one has nothing to read, or only frames we never asked for.
  int open = 0;
  for (int fd : fds) {
    pollfd p{fd, POLLIN, 0};
    bool closed = false;
    if (poll(&p, 1, 0) > 0) {
      char chunk[4096];
      for (;;) {
        const ssize_t n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed = true;
        if (n <= 0) break;
      }
    }
    if (!closed) ++open;
    close(fd);
  }
  PrintLine("open " + std::to_string(open));
  return 0;
}

std::string Words(int count, int seed) {
  static const char* const kWords[] = {"alpha", "beta",  "gamma", "delta", "epsilon", "zeta",
                                       "eta",   "theta", "iota",  "kappa", "lambda",  "mu",
                                       "nu",    "xi",    "pi",    "rho",   "sigma",   "tau",
                                       "hello", "world", "quick", "brown", "fox",     "jumps"};
  std::string text;
  for (int i = 0; i < count; ++i) {
    if (i > 0) text += ' ';
    text += kWords[(seed * 7 + i * 13) % (sizeof(kWords) / sizeof(kWords[0]))];
  }
  return text;
}

int StreamNoRead(const std::string& target, int requests, int inputs, int words, int hold_seconds) {
  auto stub = encoder::v1::Encoder::NewStub(Channel(target));
  // Leaked on purpose: the process exits with the stream open.
  auto* context = new grpc::ClientContext();
  auto stream = stub->EncodeStream(context);
  std::atomic<int> written{0};
  std::thread([&, stream = stream.get()] {
    for (int r = 0; r < requests; ++r) {
      encoder::v1::EncodeRequest request;
      request.set_id("r" + std::to_string(r));
      request.set_pooling(encoder::v1::POOLING_NONE);
      for (int i = 0; i < inputs; ++i) request.add_inputs()->set_text(Words(words, r + i));
      if (!stream->Write(request)) return;
      ++written;
    }
  }).detach();
  std::this_thread::sleep_for(std::chrono::seconds(hold_seconds));
  PrintLine("written " + std::to_string(written.load()));
  stream.release();  // never finish or destroy it: the process leaves abruptly
  std::fflush(stdout);
  _exit(0);
}

int EncodeSized(const std::string& target, int inputs, int64_t bytes_per_input) {
  auto stub = encoder::v1::Encoder::NewStub(Channel(target));
  encoder::v1::EncodeRequest request;
  std::string text;
  while (static_cast<int64_t>(text.size()) < bytes_per_input) text += "word ";
  text.resize(static_cast<size_t>(bytes_per_input));
  for (int i = 0; i < inputs; ++i) request.add_inputs()->set_text(text);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  encoder::v1::EncodeResponse response;
  const grpc::Status status = stub->Encode(&context, request, &response);
  if (status.ok()) {
    PrintLine("OK: " + std::to_string(response.outputs_size()) + " outputs");
  } else {
    PrintLine(CodeName(status.error_code()) + ": " + status.error_message());
  }
  return 0;
}

// ---- http-crowd and grpc-crowd ----

void RaiseOpenFilesLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      std::fprintf(stderr, "reliability-probe: setrlimit: %s\n", std::strerror(errno));
    }
  }
}

// The server's resident set (VmRSS, kB) from /proc; -1 when unreadable.
int64_t ServerRssKb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

int64_t MillisBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count();
}

int64_t MicrosBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
}

// A non-blocking socket with connect() under way to HOST:PORT; -1 on failure.
int ConnectNonBlocking(const std::string& host, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    std::fprintf(stderr, "reliability-probe: socket: %s\n", std::strerror(errno));
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 &&
      errno != EINPROGRESS) {
    std::fprintf(stderr, "reliability-probe: connect: %s\n", std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

// How far the HTTP/1.1 response at the start of `bytes` got: its status once
// the status line is in; complete once its body (Content-Length or chunked)
// is; a body without either ends when the server closes.
struct HttpProgress {
  int status = 0;
  bool complete = false;
};

HttpProgress ParseHttpResponse(const std::string& bytes) {
  HttpProgress progress;
  if (bytes.size() >= 12 && bytes.rfind("HTTP/1.", 0) == 0) {
    progress.status = std::atoi(bytes.c_str() + 9);
  }
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string::npos) return progress;
  std::string head = bytes.substr(0, end + 2);
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const size_t body = end + 4;
  if (head.find("\r\ntransfer-encoding: chunked\r\n") != std::string::npos) {
    size_t at = body;
    for (;;) {
      const size_t line = bytes.find("\r\n", at);
      if (line == std::string::npos) return progress;
      const size_t size = std::strtoul(bytes.c_str() + at, nullptr, 16);
      if (size == 0) {
        progress.complete = bytes.find("\r\n\r\n", at) != std::string::npos;
        return progress;
      }
      at = line + 2 + size + 2;
      if (at > bytes.size()) return progress;
    }
  }
  const size_t length_at = head.find("\r\ncontent-length:");
  if (length_at != std::string::npos) {
    const size_t length = std::strtoul(head.c_str() + length_at + 17, nullptr, 10);
    progress.complete = bytes.size() >= body + length;
  } else if (progress.status < 200 || progress.status == 204 || progress.status == 304) {
    progress.complete = true;
  }
  return progress;
}

// One connection of a crowd: its opening exchange (what it sends, what it
// waits for), then what the server did with it while it sat there.
struct CrowdConnection {
  int fd = -1;
  std::string out;          // still to send
  std::string in;           // read and not yet consumed
  bool answered = false;    // the exchange needs nothing more from the server
  bool ok = false;          // and it went as expected (a 2xx, the SETTINGS)
  bool finished = false;    // answered and everything sent
  Clock::time_point ready;  // when it finished
  bool closed = false;      // the server closed it (or it failed)
  int64_t close_ms = -1;    // after `ready`
  std::string answer;       // what the server sent once it had finished
};

// Reads what is there; false once the connection is closed or broken.
bool ReadAvailable(int fd, std::string& into) {
  char chunk[16384];
  for (;;) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) {
      into.append(chunk, static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
}

// Opens COUNT connections, at most WINDOW of them unfinished at a time: each
// sends HELLO and hands what it reads to EXCHANGE, which may queue bytes in
// `out` and returns true once it needs nothing more from the server. Stops
// at DEADLINE; unfinished connections stay open, as they are.
std::vector<CrowdConnection> OpenCrowd(const std::string& host, int port, int count, size_t window,
                                       Clock::time_point deadline, const std::string& hello,
                                       const std::function<bool(CrowdConnection&)>& exchange) {
  std::vector<CrowdConnection> crowd;
  crowd.reserve(static_cast<size_t>(count));
  std::vector<size_t> active;
  bool can_open = true;
  for (;;) {
    while (can_open && static_cast<int>(crowd.size()) < count && active.size() < window) {
      const int fd = ConnectNonBlocking(host, port);
      if (fd < 0) {
        can_open = false;
        break;
      }
      CrowdConnection connection;
      connection.fd = fd;
      connection.out = hello;
      active.push_back(crowd.size());
      crowd.push_back(std::move(connection));
    }
    const Clock::time_point now = Clock::now();
    if (active.empty() || now >= deadline) break;
    std::vector<pollfd> polls;
    for (size_t i : active) {
      const CrowdConnection& c = crowd[i];
      polls.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    }
    const int64_t wait = std::min<int64_t>(100, MillisBetween(now, deadline) + 1);
    if (poll(polls.data(), polls.size(), static_cast<int>(wait)) < 0 && errno != EINTR) break;
    std::vector<size_t> still;
    for (size_t k = 0; k < active.size(); ++k) {
      CrowdConnection& c = crowd[active[k]];
      const short events = polls[k].revents;
      bool broken = false;
      if ((events & POLLOUT) != 0) {
        const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n > 0) c.out.erase(0, static_cast<size_t>(n));
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) broken = true;
      }
      if ((events & (POLLIN | POLLHUP | POLLERR)) != 0 && !ReadAvailable(c.fd, c.in)) {
        broken = true;
      }
      if (events != 0 && !c.answered) c.answered = exchange(c);
      if (broken) {
        close(c.fd);
        c.fd = -1;
        c.closed = true;
        c.finished = true;
        c.ok = false;
        c.close_ms = 0;
        c.ready = Clock::now();
      } else if (c.answered && c.out.empty()) {
        c.finished = true;
        c.ready = Clock::now();
      } else {
        still.push_back(active[k]);
      }
    }
    active.swap(still);
  }
  return crowd;
}

// Watches the finished connections of the crowds for what the server sends
// and when it closes them, until STOP says so (checked every 50 ms).
void WatchCrowds(std::vector<CrowdConnection*> watched,
                 const std::function<void(CrowdConnection&)>& on_bytes,
                 const std::function<bool()>& stop) {
  while (!stop()) {
    std::vector<pollfd> polls;
    std::vector<CrowdConnection*> open;
    for (CrowdConnection* c : watched) {
      if (c->closed || c->fd < 0) continue;
      polls.push_back({c->fd, POLLIN, 0});
      open.push_back(c);
    }
    if (polls.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (poll(polls.data(), polls.size(), 50) <= 0) continue;
    for (size_t k = 0; k < polls.size(); ++k) {
      if (polls[k].revents == 0) continue;
      CrowdConnection& c = *open[k];
      const bool alive = ReadAvailable(c.fd, c.in);
      on_bytes(c);
      if (!alive) {
        c.closed = true;
        c.close_ms = MillisBetween(c.ready, Clock::now());
      }
    }
  }
}

struct CrowdOptions {
  std::string host;
  int port = 0;
  int idle = 0;
  int stalled = 0;
  int requests = 0;
  int server_pid = 0;
  int stall_wait_seconds = 15;
  std::string body = R"({"inputs":"hello world"})";
  std::string path = "/embed";
};

int64_t Percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(values.size()) + 0.999999);
  rank = std::max<size_t>(1, std::min(rank, values.size()));
  return values[rank - 1];
}

// Runs the crowd both subcommands share: the idle and stalled connections
// (HELLOs and EXCHANGEs given), the server's RSS, REQUEST() REQUESTS times
// (it returns a status name and sets the latency in microseconds), the watch, and prints the
// JSON line.
int RunCrowd(const CrowdOptions& options, const std::string& idle_hello,
             const std::function<bool(CrowdConnection&)>& idle_exchange,
             const std::string& stalled_hello,
             const std::function<bool(CrowdConnection&)>& stalled_exchange,
             const std::function<void(CrowdConnection&)>& on_bytes,
             const std::function<std::string(int64_t*)>& request) {
  RaiseOpenFilesLimit();
  nlohmann::ordered_json report;
  report["idle"] = options.idle;
  report["stalled"] = options.stalled;
  const int64_t rss_before = options.server_pid > 0 ? ServerRssKb(options.server_pid) : -1;

  std::vector<CrowdConnection> idle =
      OpenCrowd(options.host, options.port, options.idle, 128,
                Clock::now() + std::chrono::seconds(10), idle_hello, idle_exchange);
  const auto served = std::count_if(idle.begin(), idle.end(),
                                    [](const CrowdConnection& c) { return c.ok && !c.closed; });
  report["idle_opened"] = idle.size();
  report["idle_served"] = served;
  std::vector<CrowdConnection> stalled =
      OpenCrowd(options.host, options.port, options.stalled, 1024,
                Clock::now() + std::chrono::seconds(5), stalled_hello, stalled_exchange);
  report["stalled_opened"] = std::count_if(stalled.begin(), stalled.end(),
                                           [](const CrowdConnection& c) { return c.finished; });

  std::vector<CrowdConnection*> watched;
  for (auto* crowd : {&idle, &stalled}) {
    for (CrowdConnection& c : *crowd) {
      if (c.finished && !c.closed) watched.push_back(&c);
    }
  }
  std::atomic<bool> requests_done{false};
  std::atomic<int64_t> stop_at_ms{0};
  const Clock::time_point watch_start = Clock::now();
  std::thread watcher([&] {
    WatchCrowds(watched, on_bytes, [&] {
      if (!requests_done.load()) return false;
      if (MillisBetween(watch_start, Clock::now()) >= stop_at_ms.load()) return true;
      return std::all_of(stalled.begin(), stalled.end(),
                         [](const CrowdConnection& c) { return c.closed || !c.finished; });
    });
  });

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (options.server_pid > 0) {
    const int64_t rss_after = ServerRssKb(options.server_pid);
    report["rss_before_kb"] = rss_before;
    report["rss_after_kb"] = rss_after;
    const size_t connections = idle.size() + stalled.size();
    if (connections > 0 && rss_before >= 0 && rss_after >= 0) {
      report["kb_per_connection"] =
          static_cast<double>(rss_after - rss_before) / static_cast<double>(connections);
    }
  }

  std::map<std::string, int> statuses;
  std::vector<int64_t> latencies;
  int ok = 0;
  int timeouts_in_a_row = 0;
  for (int i = 0; i < options.requests; ++i) {
    if (timeouts_in_a_row >= 3) {  // a server that serves no one: do not wait 30 s each
      statuses["not_sent"] += options.requests - i;
      break;
    }
    int64_t latency_us = 0;
    const std::string status = request(&latency_us);
    timeouts_in_a_row =
        status == "timeout" || status == "DEADLINE_EXCEEDED" ? timeouts_in_a_row + 1 : 0;
    ++statuses[status];
    if (status == "OK" || (status.size() == 3 && status[0] == '2')) ++ok;
    latencies.push_back(latency_us);
  }
  stop_at_ms = MillisBetween(watch_start, Clock::now()) + options.stall_wait_seconds * 1000;
  requests_done = true;
  watcher.join();

  report["requests"] = options.requests;
  report["ok"] = ok;
  report["statuses"] = statuses;
  const auto ms = [](int64_t us) { return static_cast<double>(us / 10) / 100.0; };
  report["p50_ms"] = ms(Percentile(latencies, 0.5));
  report["p90_ms"] = ms(Percentile(latencies, 0.9));
  report["max_ms"] = ms(Percentile(latencies, 1.0));

  std::map<std::string, int> answers;
  int stalled_closed = 0;
  int stalled_open = 0;
  std::vector<int64_t> stalled_close_ms;
  for (const CrowdConnection& c : stalled) {
    if (!c.finished) continue;
    ++answers[c.answer.empty() ? "none" : c.answer];
    if (c.closed) {
      ++stalled_closed;
      stalled_close_ms.push_back(c.close_ms);
    } else {
      ++stalled_open;
    }
  }
  report["stalled_closed"] = stalled_closed;
  report["stalled_answers"] = answers;
  if (!stalled_close_ms.empty()) {
    report["stalled_close_ms_min"] = Percentile(stalled_close_ms, 0.0);
    report["stalled_close_ms_max"] = Percentile(stalled_close_ms, 1.0);
  }
  report["stalled_open_at_end"] = stalled_open;

  // Idle connections: the watch saw the closes; a last look with no wait.
  int idle_open = 0;
  int idle_closed = 0;
  std::vector<int64_t> idle_close_ms;
  for (CrowdConnection& c : idle) {
    if (!c.closed && c.fd >= 0) {
      pollfd p{c.fd, POLLIN, 0};
      if (poll(&p, 1, 0) > 0 && !ReadAvailable(c.fd, c.in)) {
        c.closed = true;
        c.close_ms = MillisBetween(c.ready, Clock::now());
      }
    }
    if (c.closed) {
      ++idle_closed;
      if (c.ok) idle_close_ms.push_back(c.close_ms);
    } else {
      ++idle_open;
    }
  }
  report["idle_closed"] = idle_closed;
  if (!idle_close_ms.empty()) {
    report["idle_close_ms_min"] = Percentile(idle_close_ms, 0.0);
    report["idle_close_ms_max"] = Percentile(idle_close_ms, 1.0);
  }
  report["idle_open_at_end"] = idle_open;
  for (auto* crowd : {&idle, &stalled}) {
    for (CrowdConnection& c : *crowd) {
      if (c.fd >= 0) close(c.fd);
    }
  }
  PrintLine(report.dump());
  return 0;
}

// One HTTP/1.1 request on a new connection, bounded by 30 s: the status
// ("200", or "connect_error", "closed", "timeout") and the latency (microseconds) from
// connect() to the last byte.
std::string HttpRequestOnce(const std::string& host, int port, const std::string& bytes,
                            int64_t* latency_us) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::seconds(30);
  const int fd = ConnectNonBlocking(host, port);
  if (fd < 0) return "connect_error";
  std::string out = bytes;
  std::string in;
  std::string result = "timeout";
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    pollfd p{fd, static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0};
    if (poll(&p, 1, static_cast<int>(std::min<int64_t>(1000, MillisBetween(now, deadline) + 1))) <=
        0) {
      continue;
    }
    if ((p.revents & POLLOUT) != 0) {
      const ssize_t n = send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (n > 0) out.erase(0, static_cast<size_t>(n));
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        result = errno == ECONNREFUSED ? "connect_error" : "closed";
        break;
      }
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const bool alive = ReadAvailable(fd, in);
      const HttpProgress progress = ParseHttpResponse(in);
      if (progress.complete || (!alive && progress.status > 0)) {
        result = std::to_string(progress.status);
        break;
      }
      if (!alive) {
        result = in.empty() && !out.empty() ? "connect_error" : "closed";
        break;
      }
    }
  }
  close(fd);
  *latency_us = MicrosBetween(start, Clock::now());
  return result;
}

int HttpCrowd(const CrowdOptions& options) {
  const std::string health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const std::string stall =
      "POST /embed HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 100\r\n\r\n{\"inputs\":";
  const std::string request = "POST " + options.path +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Content-Length: " +
                              std::to_string(options.body.size()) + "\r\n\r\n" + options.body;
  return RunCrowd(
      options, health,
      [](CrowdConnection& c) {
        const HttpProgress progress = ParseHttpResponse(c.in);
        if (!progress.complete) return false;
        c.ok = progress.status >= 200 && progress.status < 300;
        c.in.clear();
        return true;
      },
      stall, [](CrowdConnection& c) { return c.ok = true; },
      [](CrowdConnection& c) {
        if (c.answer.empty()) {
          const int status = ParseHttpResponse(c.in).status;
          if (status > 0) c.answer = std::to_string(status);
        }
      },
      [&](int64_t* latency_us) {
        return HttpRequestOnce(options.host, options.port, request, latency_us);
      });
}

std::string FrameTypeName(int type) {
  static const char* const kNames[] = {"DATA",          "HEADERS",      "PRIORITY", "RST_STREAM",
                                       "SETTINGS",      "PUSH_PROMISE", "PING",     "GOAWAY",
                                       "WINDOW_UPDATE", "CONTINUATION"};
  return type >= 0 && type < 10 ? kNames[type] : "TYPE_" + std::to_string(type);
}

// HPACK "literal header field without indexing, new name", no Huffman coding
// (names and values shorter than 127 bytes).
std::string LiteralHeader(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + static_cast<char>(name.size()) + name +
         static_cast<char>(value.size()) + value;
}

std::string Frame(int type, int flags, uint32_t stream, const std::string& payload) {
  std::string frame;
  frame += static_cast<char>((payload.size() >> 16) & 0xff);
  frame += static_cast<char>((payload.size() >> 8) & 0xff);
  frame += static_cast<char>(payload.size() & 0xff);
  frame += static_cast<char>(type);
  frame += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) frame += static_cast<char>((stream >> shift) & 0xff);
  return frame + payload;
}

int GrpcCrowd(const CrowdOptions& options) {
  const std::string preface = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(4, 0, 0, "");
  const std::string headers =
      LiteralHeader(":method", "POST") + LiteralHeader(":scheme", "http") +
      LiteralHeader(":path", "/encoder.v1.Encoder/Encode") +
      LiteralHeader(":authority", options.host + ":" + std::to_string(options.port)) +
      LiteralHeader("content-type", "application/grpc") + LiteralHeader("te", "trailers");
  // The gRPC message prefix: not compressed, 1000 bytes long; 10 of them sent.
  const std::string message = std::string("\x00\x00\x00\x03\xe8", 5) + "0123456789";
  const std::string stall = preface + Frame(1, 0x4, 1, headers) + Frame(0, 0, 1, message);
  const auto ack_settings = [](CrowdConnection& c) {
    bool settings = false;
    ConsumeFrames(c.in, [&](int type, int flags) {
      if (type == 4 && (flags & 1) == 0) settings = true;
    });
    if (settings) {
      c.out += kSettingsAck;
      c.ok = true;
    }
    return settings;
  };
  const std::string target = options.host + ":" + std::to_string(options.port);
  return RunCrowd(
      options, preface, ack_settings, stall, ack_settings,
      [](CrowdConnection& c) {
        ConsumeFrames(c.in, [&](int type, int) {
          if (type == 4 || type == 8 || type == 6) return;  // SETTINGS, windows, PING
          const std::string name = FrameTypeName(type);
          if (c.answer.find(name) != std::string::npos) return;
          c.answer += (c.answer.empty() ? "" : "+") + name;
        });
      },
      [&](int64_t* latency_us) {
        const Clock::time_point start = Clock::now();
        auto stub = encoder::v1::Encoder::NewStub(Channel(target));
        encoder::v1::EncodeRequest request;
        request.add_inputs()->set_text("hello world");
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        encoder::v1::EncodeResponse response;
        const grpc::Status status = stub->Encode(&context, request, &response);
        *latency_us = MicrosBetween(start, Clock::now());
        return CodeName(status.error_code());
      });
}

// Parses "HOST PORT IDLE STALLED REQUESTS [--flag value]..." from argv[2].
bool ParseCrowdOptions(int argc, char** argv, CrowdOptions* options) {
  if (argc < 7) return false;
  options->host = argv[2];
  options->port = std::atoi(argv[3]);
  options->idle = std::atoi(argv[4]);
  options->stalled = std::atoi(argv[5]);
  options->requests = std::atoi(argv[6]);
  for (int i = 7; i < argc; i += 2) {
    if (i + 1 >= argc) return false;
    const std::string flag = argv[i];
    if (flag == "--server-pid") {
      options->server_pid = std::atoi(argv[i + 1]);
    } else if (flag == "--stall-wait-seconds") {
      options->stall_wait_seconds = std::atoi(argv[i + 1]);
    } else if (flag == "--body") {
      options->body = argv[i + 1];
    } else if (flag == "--path") {
      options->path = argv[i + 1];
    } else {
      return false;
    }
  }
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: reliability-probe health-watch TARGET INTERVAL_MS MAX_SECONDS\n"
               "       reliability-probe idle-connections HOST PORT N HOLD_SECONDS\n"
               "       reliability-probe stream-no-read TARGET REQUESTS INPUTS WORDS "
               "HOLD_SECONDS\n"
               "       reliability-probe encode-sized TARGET INPUTS BYTES_PER_INPUT\n"
               "       reliability-probe http-crowd HOST PORT IDLE STALLED REQUESTS "
               "[--server-pid PID] [--stall-wait-seconds S] [--body JSON] [--path PATH]\n"
               "       reliability-probe grpc-crowd HOST PORT IDLE STALLED REQUESTS "
               "[--server-pid PID] [--stall-wait-seconds S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string command = argv[1];
  const auto arg = [&](int i) { return std::atoll(argv[i]); };
  if (command == "health-watch" && argc == 5) {
    return HealthWatch(argv[2], static_cast<int>(arg(3)), static_cast<int>(arg(4)));
  }
  if (command == "idle-connections" && argc == 6) {
    return IdleConnections(argv[2], static_cast<int>(arg(3)), static_cast<int>(arg(4)),
                           static_cast<int>(arg(5)));
  }
  if (command == "stream-no-read" && argc == 7) {
    return StreamNoRead(argv[2], static_cast<int>(arg(3)), static_cast<int>(arg(4)),
                        static_cast<int>(arg(5)), static_cast<int>(arg(6)));
  }
  if (command == "encode-sized" && argc == 5) {
    return EncodeSized(argv[2], static_cast<int>(arg(3)), arg(4));
  }
  if (command == "http-crowd" || command == "grpc-crowd") {
    CrowdOptions options;
    if (!ParseCrowdOptions(argc, argv, &options)) return Usage();
    return command == "http-crowd" ? HttpCrowd(options) : GrpcCrowd(options);
  }
  return Usage();
}
