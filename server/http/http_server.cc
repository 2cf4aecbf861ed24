#include "server/http/http_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/log.h"
#include "server/http/connection.h"
#include "server/http/connection_hub.h"
#include "server/http/request_handler.h"

namespace server::http {
namespace {

namespace net = boost::asio;
using boost::system::error_code;
using tcp = net::ip::tcp;

// When accept fails for want of file descriptors, accepting pauses this long
// (the queue of pending connections waits in the kernel's backlog).
constexpr std::chrono::milliseconds kAcceptPause{100};
// How long Stop() gives the last answers to be written and read.
constexpr std::chrono::seconds kStopWriteWait{5};

}  // namespace

struct HttpServer::Impl {
  Impl(const HttpOptions& options, prometheus::Registry& registry)
      : metrics(registry), hub(options, &metrics) {}

  void Accept();
  void OnAcceptError(const error_code& error);

  HttpMetrics metrics;
  // Destroyed last but the metrics: connections that outlive the event
  // loops' handlers leave its register in their destructors.
  ConnectionHub hub;
  std::vector<std::unique_ptr<net::io_context>> loops;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards;
  std::optional<tcp::acceptor> acceptor;  // on loops[0]
  std::optional<net::steady_timer> accept_pause;
  std::vector<std::thread> threads;
  size_t next_loop = 0;  // touched on loops[0] only
  bool warned_no_descriptors = false;
  bool stopped = false;
};

void HttpServer::Impl::Accept() {
  net::io_context& loop = *loops[next_loop++ % loops.size()];
  acceptor->async_accept(loop, [this, &loop](error_code error, tcp::socket socket) {
    if (error == net::error::operation_aborted || hub.stopping()) return;
    if (error) return OnAcceptError(error);
    auto connection = std::make_shared<Connection>(std::move(socket), &hub);
    const bool full = hub.open() >= hub.options().max_connections;
    hub.Add(connection);
    if (full) {
      hub.metrics().ConnectionRefused();
      // A clear answer rather than a connection left waiting in the backlog.
      HttpReply reply =
          ErrorReply(absl::UnavailableError(absl::StrCat(
                         "the server holds its maximum of ", hub.options().max_connections,
                         " connections (--http-max-connections); retry later")),
                     Api::kTei, 503);
      net::post(loop, [connection, reply = std::move(reply)] { connection->Refuse(reply); });
    } else {
      net::post(loop, [connection] { connection->Start(); });
    }
    Accept();
  });
}

void HttpServer::Impl::OnAcceptError(const error_code& error) {
  if (error == net::error::no_descriptors || error.value() == ENFILE ||
      error == net::error::no_buffer_space || error == net::error::no_memory) {
    if (!warned_no_descriptors) {
      warned_no_descriptors = true;
      core::LogError(absl::StrCat("HTTP: cannot accept a connection (", error.message(),
                                  "); new connections wait until some close. Raise the open-file "
                                  "limit (ulimit -n) or lower --http-max-connections"));
    }
    accept_pause->expires_after(kAcceptPause);
    accept_pause->async_wait([this](error_code wait_error) {
      if (!wait_error && !hub.stopping()) Accept();
    });
    return;
  }
  Accept();  // the peer gave up before the accept (ECONNABORTED): go on
}

HttpServer::HttpServer() = default;

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpOptions& options, const core::ServedModels* models, core::Clock* clock,
    std::vector<std::weak_ptr<prometheus::Collectable>> collectables) {
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->impl_ = std::make_unique<Impl>(options, *models->first().metrics->registry());
  Impl& impl = *server->impl_;
  ConnectionHub* hub = &impl.hub;
  impl.hub.set_handler(std::make_unique<RequestHandler>(
      options, models, clock, std::move(collectables),
      [hub](std::function<void()> work) { hub->Post(std::move(work)); }));
  for (int i = 0; i < std::max(1, options.io_threads); ++i) {
    impl.loops.push_back(std::make_unique<net::io_context>(1));
    impl.guards.push_back(net::make_work_guard(*impl.loops.back()));
  }

  const std::string host =
      options.host.empty() || options.host == "0.0.0.0" ? "0.0.0.0" : options.host;
  const std::string where = absl::StrCat(
      host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host, ":", options.port);
  error_code error;
  tcp::resolver resolver(*impl.loops[0]);
  const tcp::resolver::results_type found =
      resolver.resolve(host, std::to_string(options.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error || found.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot listen for HTTP on ", where, " (--http-port): ", error.message()));
  }
  tcp::acceptor& acceptor = impl.acceptor.emplace(*impl.loops[0]);
  const tcp::endpoint endpoint = found.begin()->endpoint();
  acceptor.open(endpoint.protocol(), error);
  // Lets a restarted server bind while the old one's connections are in
  // TIME_WAIT; on Linux it does not let two servers share the port.
  if (!error) acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(net::socket_base::max_listen_connections, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot listen for HTTP on ", where, " (--http-port): ", error.message()));
  }
  server->port_ = acceptor.local_endpoint().port();
  impl.accept_pause.emplace(*impl.loops[0]);
  impl.Accept();
  for (auto& loop : impl.loops) {
    impl.threads.emplace_back([loop = loop.get()] { loop->run(); });
  }
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::SetServing(bool serving) { impl_->hub.handler().SetServing(serving); }

int HttpServer::open_connections() const { return impl_->hub.open(); }

void HttpServer::Stop() {
  if (impl_ == nullptr || impl_->stopped) return;
  Impl& impl = *impl_;
  impl.stopped = true;
  if (impl.threads.empty()) return;  // Start failed before serving: nothing runs
  impl.hub.handler().SetServing(false);
  impl.hub.set_stopping();
  // No accept after this: the acceptor closes on its own loop.
  std::promise<void> closed;
  net::post(*impl.loops[0], [&impl, &closed] {
    error_code ignored;
    impl.acceptor->close(ignored);
    impl.accept_pause->cancel();
    closed.set_value();
  });
  closed.get_future().wait();
  for (const std::shared_ptr<Connection>& connection : impl.hub.Live()) {
    net::post(connection->executor(), [connection] { connection->Shutdown(); });
  }
  // The core answers every request it was given (its drain has run, or it
  // answers them UNAVAILABLE); each answer is then written with
  // Connection: close.
  impl.hub.AwaitNoRequests();
  if (!impl.hub.AwaitNoConnections(std::chrono::steady_clock::now() + kStopWriteWait)) {
    // Clients that neither read their answer nor close: closed now, so that
    // nothing is left open (and counted) after Stop().
    for (const std::shared_ptr<Connection>& connection : impl.hub.Live()) {
      net::post(connection->executor(), [connection] { connection->Close(); });
    }
    impl.hub.AwaitNoConnections(std::chrono::steady_clock::now() + kStopWriteWait);
  }
  impl.guards.clear();
  for (auto& loop : impl.loops) loop->stop();
  for (std::thread& thread : impl.threads) thread.join();
  impl.hub.JoinHandlerThreads();
}

}  // namespace server::http
