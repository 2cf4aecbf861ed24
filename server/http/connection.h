// One client connection of the HTTP adapter, on one event loop (an Asio
// io_context run by one thread: every member below is touched only there).
// Its life, with a timer for each waiting phase:
//   headers   --http-header-timeout from the connection's start or a
//             request's first byte; too large: 431; too slow: 408
//   body      --http-body-timeout; over --http-max-body-bytes: 413 (before
//             reading it when Content-Length says so); too slow: 408
//   handling  the whole request is with the handler threads and the core;
//             meanwhile the socket is watched: a client that leaves marks its
//             request cancelled, and bytes of a pipelined next request are kept
//   writing   --http-write-timeout for the whole response
//   idle      keep-alive: --http-idle-timeout for the next request's first
//             byte, watched without a read buffer
// Pipelined requests are served one after another, in order. Errors of
// framing (408, 413, 431, 400) close the connection after the answer, with a
// short lingering read so that the client sees the answer rather than a reset.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/http/connection_hub.h"
#include "server/http/request_handler.h"

namespace server::http {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, ConnectionHub* hub);
  ~Connection();  // leaves the hub's register
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // On the connection's event loop: reads the first request.
  void Start();
  // On the connection's event loop, at Stop(): closes it unless a request of
  // its is with the handler (that one is answered, then the connection closes).
  void Shutdown();
  // On the connection's event loop, instead of Start(): answers `reply` (a
  // refusal of the connection itself) and closes.
  void Refuse(HttpReply reply);
  // On the connection's event loop: closes it now, whatever its phase (Stop's
  // last resort for connections still open after its wait).
  void Close() { CloseNow(); }

  const boost::asio::any_io_executor& executor() const { return executor_; }

 private:
  enum class Phase { kIdle, kHeaders, kBody, kHandling, kWriting, kLingering, kClosed };

  void AwaitRequest();
  void ReadHeaders();
  void OnHeaders(boost::system::error_code error);
  void ReadBody();
  void OnBody(boost::system::error_code error);
  void HandOver();
  void WatchClient();
  void OnAnswer(HttpReply reply);
  // Sends `reply` (closing after it when it says so, the request did, or the
  // server is stopping), then awaits the next request.
  void Respond(HttpReply reply);
  // A framing error before any route is known: the reply in TEI's shape, then close.
  void RefuseRequest(int http_status, const absl::Status& status);
  void Linger();
  void DiscardInput();
  void CloseNow();
  // The phase's timer: at `timeout` the socket's operations are cancelled and
  // timed_out_ is set.
  void Arm(std::chrono::milliseconds timeout);
  void Disarm();

  ConnectionHub* const hub_;
  boost::asio::ip::tcp::socket socket_;
  const boost::asio::any_io_executor executor_;  // the event loop's (read from other threads)
  boost::asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  bool timed_out_ = false;
  Phase phase_ = Phase::kHeaders;
  boost::beast::flat_buffer buffer_;  // bytes read and not yet parsed
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Screening screening_;
  HttpRequest request_;  // the request being read: its head, then its body
  bool keep_alive_ = true;
  bool keep_alive_10_ = false;  // an HTTP/1.0 request that asked for keep-alive
  // The request with the handler: set when its client left.
  std::shared_ptr<std::atomic<bool>> client_left_;
  uint64_t watch_generation_ = 0;
  // The response being written: head, then body, in one gathered write.
  std::string out_head_;
  std::string out_body_;
  size_t lingered_bytes_ = 0;
};

}  // namespace server::http
