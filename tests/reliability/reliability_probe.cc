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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

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
    size_t at = 0;
    while (buffer.size() - at >= 9) {
      const auto* h = reinterpret_cast<const unsigned char*>(buffer.data() + at);
      const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      const int type = h[3];
      const int flags = h[4];
      if (buffer.size() - at < 9 + length) break;
      if (type == 4 && (flags & 1) == 0) {
        SendAll(fd, std::string("\x00\x00\x00\x04\x01\x00\x00\x00\x00", 9));
        return;
      }
      at += 9 + length;
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

int Usage() {
  std::fprintf(stderr,
               "usage: reliability-probe health-watch TARGET INTERVAL_MS MAX_SECONDS\n"
               "       reliability-probe idle-connections HOST PORT N HOLD_SECONDS\n"
               "       reliability-probe stream-no-read TARGET REQUESTS INPUTS WORDS "
               "HOLD_SECONDS\n"
               "       reliability-probe encode-sized TARGET INPUTS BYTES_PER_INPUT\n");
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
  return Usage();
}
