// Boost.Beast candidate: asynchronous sessions on an io_context run by
// `threads` threads (the shape of Beast's http_server_async example).
#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "common.h"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

static const std::string kAnswer = CannedAnswer();

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : stream_(std::move(socket)) {
    stream_.socket().set_option(tcp::no_delay(true));
  }
  void Read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code error, size_t) {
                       if (!error) self->Write();
                     });
  }

 private:
  void Write() {
    auto response =
        std::make_shared<http::response<http::string_body>>(http::status::ok, request_.version());
    response->set(http::field::content_type, "application/json");
    response->keep_alive(request_.keep_alive());
    response->body() = kAnswer;
    response->prepare_payload();
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code error, size_t) {
                        if (!error && response->keep_alive()) self->Read();
                      });
  }
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
};

static void Accept(tcp::acceptor& acceptor) {
  acceptor.async_accept([&](beast::error_code error, tcp::socket socket) {
    if (!error) std::make_shared<Session>(std::move(socket))->Read();
    Accept(acceptor);
  });
}

int main(int argc, char** argv) {
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  net::io_context context(threads);
  tcp::acceptor acceptor(context,
                         {net::ip::make_address("127.0.0.1"),
                          static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 18082)});
  Accept(acceptor);
  std::vector<std::thread> runners;
  for (int i = 1; i < threads; ++i) runners.emplace_back([&] { context.run(); });
  context.run();
}
