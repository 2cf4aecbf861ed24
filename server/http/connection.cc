#include "server/http/connection.h"

#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/api/refusals.h"

namespace server::http {
namespace {

namespace net = boost::asio;
namespace beast_http = boost::beast::http;
using boost::system::error_code;
using tcp = net::ip::tcp;

// After an answer that closes the connection, what the client still sends is
// read and dropped for this long (or this much), so that closing does not
// reset the connection before the client has read the answer.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr size_t kLingerBytes = 1 << 20;
// Bytes read at once while a request is with the handler (a pipelined next request).
constexpr size_t kWatchReadBytes = 4096;

// The client closed or reset its end.
bool ClientLeft(const error_code& error) {
  return error == beast_http::error::end_of_stream || error == beast_http::error::partial_message ||
         error == net::error::eof || error == net::error::connection_reset ||
         error == net::error::broken_pipe || error == net::error::operation_aborted;
}

}  // namespace

Connection::Connection(tcp::socket socket, ConnectionHub* hub)
    : hub_(hub),
      socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      timer_(socket_.get_executor()) {}

Connection::~Connection() { hub_->Remove(this); }

void Connection::Start() {
  error_code ignored;
  // Small answers must not wait for the client's delayed ACK (Nagle).
  socket_.set_option(tcp::no_delay(true), ignored);
  // WatchClient's reads must never block the event loop.
  socket_.non_blocking(true, ignored);
  if (hub_->stopping()) return CloseNow();
  ReadHeaders();  // the first request's headers are timed from the connection's start
}

void Connection::Shutdown() {
  switch (phase_) {
    case Phase::kIdle:
    case Phase::kHeaders:
    case Phase::kBody:
      // Nothing of this client's has reached the core.
      return CloseNow();
    case Phase::kHandling:
    case Phase::kWriting:
    case Phase::kLingering:
    case Phase::kClosed:
      return;  // the answer goes out with Connection: close (hub stopping)
  }
}

void Connection::AwaitRequest() {
  if (hub_->stopping()) return CloseNow();
  if (buffer_.size() > 0) return ReadHeaders();  // a pipelined request is here already
  phase_ = Phase::kIdle;
  parser_.reset();
  buffer_.shrink_to_fit();  // an idle connection holds no buffer
  Arm(hub_->options().idle_timeout);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code error) {
    if (self->phase_ != Phase::kIdle) return;
    // Idle too long, or gone: closed without an answer, as keep-alive allows.
    if (self->timed_out_) self->hub_->metrics().TimedOut(HttpMetrics::Timeout::kIdle);
    if (error || self->timed_out_) return self->CloseNow();
    self->Disarm();
    self->ReadHeaders();
  });
}

void Connection::ReadHeaders() {
  phase_ = Phase::kHeaders;
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(hub_->options().max_header_bytes));
  // Checked once the headers say how long the body is. (Not boost::none:
  // Beast 1.74 compares a Content-Length with it as if none were below every length.)
  parser_->body_limit(std::numeric_limits<uint64_t>::max());
  Arm(hub_->options().header_timeout);
  beast_http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code error, size_t) { self->OnHeaders(error); });
}

void Connection::OnHeaders(error_code error) {
  if (phase_ != Phase::kHeaders) return;
  Disarm();
  const HttpOptions& options = hub_->options();
  if (error) {
    if (timed_out_) {
      hub_->metrics().TimedOut(HttpMetrics::Timeout::kHeader);
      // A connection that never began a request is closed without a word.
      if (!parser_->got_some() && buffer_.size() == 0) return CloseNow();
      return RefuseRequest(
          408, absl::DeadlineExceededError(
                   absl::StrCat("the request's headers did not arrive within ",
                                options.header_timeout.count(), " ms (--http-header-timeout)")));
    }
    if (error == beast_http::error::header_limit) {
      return RefuseRequest(431, absl::InvalidArgumentError(absl::StrCat(
                                    "the request line and headers are more than ",
                                    options.max_header_bytes, " bytes (--http-max-header-bytes)")));
    }
    if (ClientLeft(error)) return CloseNow();
    return RefuseRequest(
        400, absl::InvalidArgumentError(absl::StrCat("malformed HTTP request: ", error.message())));
  }
  const auto& head = parser_->get();
  keep_alive_ = head.keep_alive();
  keep_alive_10_ = keep_alive_ && head.version() < 11;
  request_ = HttpRequest{};
  request_.method = std::string(head.method_string());
  const boost::beast::string_view target = head.target();
  request_.path = DecodePath(absl::string_view(target.data(), target.size()));
  request_.model = QueryParameter(absl::string_view(target.data(), target.size()), "model");
  request_.authorization = std::string(head[beast_http::field::authorization]);
  if (const auto timeout = head.find("X-Request-Timeout-Ms"); timeout != head.end()) {
    request_.timeout_ms = std::string(timeout->value());
  }
  screening_ = hub_->handler().Screen(request_.method, request_.path, request_.authorization);
  if (screening_.reply.has_value()) return Respond(*screening_.reply);
  if (parser_->is_done()) return HandOver();  // no body

  const boost::optional<uint64_t> length = parser_->content_length();
  const auto limit = static_cast<uint64_t>(options.max_body_bytes);
  if (length.has_value() && *length > limit) {
    return Respond(hub_->handler().RefuseBody(
        screening_,
        absl::InvalidArgumentError(absl::StrCat("the body is ", *length,
                                                " bytes, more than the limit of ", limit,
                                                " (--http-max-body-bytes)")),
        413));
  }
  parser_->body_limit(limit);  // a chunked body is counted as it comes
  // HTTP/1.0 clients must not get a 1xx answer (RFC 9110 15.2).
  if (head.version() >= 11 &&
      boost::beast::iequals(head[beast_http::field::expect], "100-continue")) {
    // The client (curl, for large bodies) waits for this before sending the body.
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    phase_ = Phase::kBody;
    Arm(options.body_timeout);
    net::async_write(socket_, net::buffer(kContinue),
                     [self = shared_from_this()](error_code write_error, size_t) {
                       if (self->phase_ != Phase::kBody) return;
                       if (write_error) return self->CloseNow();
                       self->ReadBody();
                     });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  phase_ = Phase::kBody;
  Arm(hub_->options().body_timeout);
  beast_http::async_read(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code error, size_t) { self->OnBody(error); });
}

void Connection::OnBody(error_code error) {
  if (phase_ != Phase::kBody) return;
  Disarm();
  if (!error) return HandOver();
  const HttpOptions& options = hub_->options();
  RequestHandler& handler = hub_->handler();
  if (timed_out_) {
    hub_->metrics().TimedOut(HttpMetrics::Timeout::kBody);
    // Closed, not served after the fact: a slow sender holds no request open.
    return Respond(handler.RefuseBody(
        screening_,
        absl::InvalidArgumentError(absl::StrCat("the body did not arrive within ",
                                                options.body_timeout.count(),
                                                " ms (--http-body-timeout)")),
        408));
  }
  if (error == beast_http::error::body_limit) {
    return Respond(handler.RefuseBody(
        screening_,
        absl::InvalidArgumentError(absl::StrCat("the body is more than the limit of ",
                                                options.max_body_bytes,
                                                " bytes (--http-max-body-bytes)")),
        413));
  }
  if (ClientLeft(error)) return CloseNow();  // it left mid-body: nobody to answer
  return Respond(handler.RefuseBody(
      screening_,
      absl::InvalidArgumentError(absl::StrCat("the body could not be read: ", error.message())),
      400));
}

void Connection::HandOver() {
  // From the start of Stop() nothing more goes to the core: the server
  // waits only for what it has already handed over.
  if (!hub_->TryHandOver()) {
    HttpReply reply = ErrorReply(core::ShuttingDown(), screening_.api, 503);
    reply.close = true;
    parser_.reset();
    return Respond(std::move(reply));
  }
  phase_ = Phase::kHandling;
  request_.body = std::move(parser_->get().body());
  parser_.reset();
  client_left_ = std::make_shared<std::atomic<bool>>(false);
  hub_->Post([self = shared_from_this(), screening = screening_, request = std::move(request_),
              left = client_left_]() mutable {
    self->hub_->handler().Handle(
        screening, std::move(request), [left] { return left->load(); },
        [self](HttpReply reply) mutable {
          // Moved out: the core's copy of this callback keeps no reference.
          std::shared_ptr<Connection> connection = std::move(self);
          const net::any_io_executor executor = connection->executor_;
          net::post(executor,
                    [connection = std::move(connection), reply = std::move(reply)]() mutable {
                      connection->OnAnswer(std::move(reply));
                    });
        });
  });
  WatchClient();
}

void Connection::WatchClient() {
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this(),
                                              generation = ++watch_generation_](error_code error) {
    if (error || self->phase_ != Phase::kHandling || generation != self->watch_generation_) return;
    error_code read_error;
    const size_t got = self->socket_.read_some(self->buffer_.prepare(kWatchReadBytes), read_error);
    if (read_error == net::error::would_block || read_error == net::error::try_again) {
      return self->WatchClient();
    }
    if (read_error || got == 0) {
      // The client left (a half-close counts as leaving, as hyper's default
      // does): its request is cancelled if it has not run yet.
      self->client_left_->store(true);
      self->hub_->metrics().ClientLeft();
      return;
    }
    self->buffer_.commit(got);
    // A pipelined request waits its turn; past the header limit it waits unwatched.
    if (self->buffer_.size() < static_cast<size_t>(self->hub_->options().max_header_bytes)) {
      self->WatchClient();
    }
  });
}

void Connection::OnAnswer(HttpReply reply) {
  hub_->RequestAnswered();
  if (phase_ != Phase::kHandling) return;
  if (client_left_->load()) return CloseNow();  // nobody to answer
  ++watch_generation_;
  error_code ignored;
  socket_.cancel(ignored);  // the watch
  Respond(std::move(reply));
}

void Connection::Respond(HttpReply reply) {
  const bool close = reply.close || !keep_alive_ || hub_->stopping();
  out_head_ = ReplyHead(reply, close, keep_alive_10_);
  out_body_ = std::move(reply.body);  // written as it is: no copy on the event loop
  phase_ = Phase::kWriting;
  Arm(hub_->options().write_timeout);
  const std::array<net::const_buffer, 2> buffers = {net::buffer(out_head_), net::buffer(out_body_)};
  net::async_write(socket_, buffers, [self = shared_from_this(), close](error_code error, size_t) {
    if (self->phase_ != Phase::kWriting) return;
    self->Disarm();
    std::string().swap(self->out_head_);
    std::string().swap(self->out_body_);
    if (self->timed_out_) {
      self->hub_->metrics().TimedOut(HttpMetrics::Timeout::kWrite);
    }
    if (error) return self->CloseNow();
    if (close) return self->Linger();
    self->AwaitRequest();
  });
}

void Connection::Refuse(HttpReply reply) {
  error_code ignored;
  socket_.non_blocking(true, ignored);
  keep_alive_ = false;
  Respond(std::move(reply));
}

void Connection::RefuseRequest(int http_status, const absl::Status& status) {
  HttpReply reply = ErrorReply(status, Api::kTei, http_status);
  reply.close = true;
  Respond(reply);
}

void Connection::Linger() {
  phase_ = Phase::kLingering;
  parser_.reset();
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  Arm(kLingerTime);
  DiscardInput();
}

void Connection::DiscardInput() {
  buffer_.clear();
  socket_.async_read_some(buffer_.prepare(kWatchReadBytes),
                          [self = shared_from_this()](error_code error, size_t got) {
                            if (self->phase_ != Phase::kLingering) return;
                            self->lingered_bytes_ += got;
                            if (error || self->lingered_bytes_ > kLingerBytes) {
                              return self->CloseNow();
                            }
                            self->DiscardInput();
                          });
}

void Connection::CloseNow() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  Disarm();
  error_code ignored;
  socket_.close(ignored);
}

void Connection::Arm(std::chrono::milliseconds timeout) {
  timed_out_ = false;
  timer_.expires_after(timeout);
  timer_.async_wait(
      [self = shared_from_this(), generation = ++timer_generation_](error_code error) {
        if (error || generation != self->timer_generation_ || self->phase_ == Phase::kClosed) {
          return;
        }
        self->timed_out_ = true;
        error_code ignored;
        self->socket_.cancel(ignored);
      });
}

void Connection::Disarm() {
  ++timer_generation_;
  timer_.cancel();
}

}  // namespace server::http
