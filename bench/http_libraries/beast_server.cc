// Boost.Beast candidate: asynchronous sessions on an io_context run by
// `threads` threads (the shape of Beast's http_server_async example), each
// session on its own strand. Timeouts of our own: 60 s for an idle
// keep-alive connection (until the first byte of a request), then 5 s for
// the whole request (headers and body); 8 KB of headers, 1 MB of body. A
// complete /embed request goes to the worker, whose answer is posted back to
// the session's strand; meanwhile the session watches its socket, so a client
// that goes away is noticed (NoteClientGone).
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "common.h"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

static const std::string kAnswer = CannedAnswer();
static Worker worker;

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : stream_(std::move(socket)) {
    stream_.socket().set_option(tcp::no_delay(true));
  }
  // Waits (60 s at most) for the first byte of the next request.
  void Read() {
    if (buffer_.size() > 0) return ReadRequest();  // pipelined: already here
    stream_.expires_after(std::chrono::seconds(60));
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code error, size_t n) {
                              if (error) return;
                              self->buffer_.commit(n);
                              self->ReadRequest();
                            });
  }

 private:
  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(8 * 1024);
    parser_->body_limit(1024 * 1024);
    stream_.expires_after(std::chrono::seconds(5));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code error, size_t) {
                       if (error == http::error::body_limit) return self->Write(413, "");
                       if (!error) self->Handle();
                     });
  }
  void Handle() {
    stream_.expires_never();
    const auto& request = parser_->get();
    if (request.target() == "/health") return Write(200, "");
    answered_ = false;
    WatchForDisconnect();
    worker.Post([self = shared_from_this()] {
      net::post(self->stream_.get_executor(), [self] {
        self->answered_ = true;
        beast::error_code ignored;
        self->stream_.socket().cancel(ignored);  // the disconnect watch
        if (self->gone_) return;                 // nobody to answer
        self->Write(200, kAnswer);
      });
    });
  }
  void WatchForDisconnect() {
    stream_.socket().async_wait(
        tcp::socket::wait_read, [self = shared_from_this()](beast::error_code error) {
          if (error || self->answered_) return;
          char byte;
          const auto n =
              recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n == 0) {
            self->gone_ = true;
            NoteClientGone("beast");
          }
          // n > 0: a pipelined request, read after this answer.
        });
  }
  void Write(unsigned status, const std::string& body) {
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(status), parser_->get().version());
    response->set(http::field::content_type, "application/json");
    response->keep_alive(status == 200 && parser_->get().keep_alive());
    response->body() = body;
    response->prepare_payload();
    stream_.expires_after(std::chrono::seconds(5));
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code error, size_t) {
                        if (!error && response->keep_alive()) self->Read();
                      });
  }
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool answered_ = false;
  bool gone_ = false;
};

static void Accept(net::io_context& context, tcp::acceptor& acceptor) {
  acceptor.async_accept(net::make_strand(context),
                        [&](beast::error_code error, tcp::socket socket) {
                          if (!error) std::make_shared<Session>(std::move(socket))->Read();
                          Accept(context, acceptor);
                        });
}

int main(int argc, char** argv) {
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  net::io_context context(threads);
  tcp::acceptor acceptor(context,
                         {net::ip::make_address("127.0.0.1"),
                          static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 18082)});
  Accept(context, acceptor);
  std::vector<std::thread> runners;
  for (int i = 1; i < threads; ++i) runners.emplace_back([&] { context.run(); });
  context.run();
}
