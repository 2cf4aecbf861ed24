#include "server/http/http_server.h"

#include <civetweb.h>
#include <netdb.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include "absl/strings/string_view.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "server/core/input_error.h"
#include "server/core/log.h"
#include "server/http/http_errors.h"
#include "server/http/json_mapping.h"
#include "server/http/routes.h"

namespace server::http {
namespace {

using Json = nlohmann::json;

struct Reply {
  int status = 200;
  std::string body;
  // None for an empty body (TEI's /health answers 200 with nothing).
  const char* content_type = "application/json";
  bool close = false;  // the request was not read in full: end the connection
  std::string allow;   // 405: the methods the path takes
};

Reply ErrorReply(const absl::Status& status, Api api, int http_status = 0) {
  if (http_status == 0) http_status = HttpStatusFor(status, api);
  Reply reply;
  reply.status = http_status;
  reply.body = ErrorBody(status, http_status, api);
  return reply;
}

// The status line and headers are written here, not with CivetWeb's
// mg_response_header_*: those add a Date header through gmtime(), whose
// static buffer CivetWeb's worker threads then share (a data race TSan
// reports in libcivetweb). One write for head and body: one syscall.
void Send(mg_connection* connection, const Reply& reply) {
  if (reply.close) mg_disable_connection_keep_alive(connection);
  std::string bytes =
      absl::StrCat("HTTP/1.1 ", reply.status, " ", ReasonPhrase(reply.status), "\r\n");
  if (reply.content_type != nullptr) {
    absl::StrAppend(&bytes, "Content-Type: ", reply.content_type, "\r\n");
  }
  absl::StrAppend(&bytes, "Content-Length: ", reply.body.size(), "\r\n");
  if (!reply.allow.empty()) absl::StrAppend(&bytes, "Allow: ", reply.allow, "\r\n");
  // Overload is brief: the queue drains in a batch or two.
  if (reply.status == 429) bytes += "Retry-After: 1\r\n";
  if (reply.status == 401) bytes += "WWW-Authenticate: Bearer\r\n";
  if (reply.close) bytes += "Connection: close\r\n";
  bytes += "\r\n";
  bytes += reply.body;
  mg_write(connection, bytes.data(), bytes.size());
}

// Reads the body, at most `limit` bytes. 413 beyond it; 400 when the client
// stops sending before Content-Length (after the read timeout).
absl::StatusOr<std::string> ReadBody(mg_connection* connection, int64_t limit, int* http_status) {
  const mg_request_info* info = mg_get_request_info(connection);
  const long long declared = info->content_length;  // -1: chunked or unknown
  if (declared > limit) {
    *http_status = 413;
    return absl::InvalidArgumentError(absl::StrCat("the body is ", declared,
                                                   " bytes, more than the limit of ", limit,
                                                   " (--http-max-body-bytes)"));
  }
  std::string body;
  if (declared >= 0) body.reserve(static_cast<size_t>(declared));
  char buffer[16384];
  while (true) {
    const int got = mg_read(connection, buffer, sizeof(buffer));
    if (got < 0) {
      *http_status = 400;
      return absl::InvalidArgumentError("the body could not be read (connection error or timeout)");
    }
    if (got == 0) break;
    body.append(buffer, static_cast<size_t>(got));
    if (static_cast<int64_t>(body.size()) > limit) {
      *http_status = 413;
      return absl::InvalidArgumentError(absl::StrCat("the body is more than the limit of ", limit,
                                                     " bytes (--http-max-body-bytes)"));
    }
  }
  if (declared >= 0 && static_cast<long long>(body.size()) != declared) {
    *http_status = 400;
    return absl::InvalidArgumentError(absl::StrCat("the body ended after ", body.size(), " of its ",
                                                   declared, " bytes (Content-Length)"));
  }
  return body;
}

// Connects to host:port and closes at once.
void WakeListener(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  const int fd = socket(found->ai_family, SOCK_STREAM, 0);
  if (fd >= 0) {
    connect(fd, found->ai_addr, found->ai_addrlen);
    close(fd);
  }
  freeaddrinfo(found);
}

int Callback(mg_connection* connection, void* server) {
  return static_cast<HttpServer*>(server)->Handle(connection);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpOptions& options, HttpModelInfo model, EncodeDispatcher* dispatcher,
    ServerMetrics* metrics, const ApiKeys* keys, Clock* clock,
    std::vector<std::weak_ptr<prometheus::Collectable>> collectables) {
  std::unique_ptr<HttpServer> server(new HttpServer(options, std::move(model), dispatcher, metrics,
                                                    keys, clock, std::move(collectables)));
  const std::string host = options.host == "0.0.0.0" || options.host.empty() ? "" : options.host;
  const std::string ports =
      host.find(':') != std::string::npos
          ? absl::StrCat("[", host, "]:", options.port)
          : (host.empty() ? std::to_string(options.port) : absl::StrCat(host, ":", options.port));
  const std::string threads = std::to_string(options.threads);
  const std::string io_timeout = std::to_string(options.io_timeout.count());
  const std::string keep_alive = std::to_string(options.keep_alive_timeout.count());
  const char* config[] = {"listening_ports", ports.c_str(), "num_threads", threads.c_str(),
                          "request_timeout_ms", io_timeout.c_str(), "keep_alive_timeout_ms",
                          keep_alive.c_str(), "enable_keep_alive", "yes",
                          // Small responses must not wait for Nagle's delayed ACK.
                          "tcp_nodelay", "1", "enable_directory_listing", "no", nullptr};
  mg_callbacks callbacks{};
  // CivetWeb's own messages would go to stderr unasked; the server logs its own.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  server->context_ = mg_start(&callbacks, server.get(), config);
  if (server->context_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot listen for HTTP on ", ports, " (--http-port)"));
  }
  mg_set_request_handler(server->context_, "/", Callback, server.get());
  mg_server_port port_info[4];
  const int count = mg_get_server_ports(server->context_, 4, port_info);
  if (count < 1) return absl::InternalError("the HTTP server has no listening port");
  server->port_ = port_info[0].port;
  server->serving_ = true;
  return server;
}

HttpServer::HttpServer(const HttpOptions& options, HttpModelInfo model,
                       EncodeDispatcher* dispatcher, ServerMetrics* metrics, const ApiKeys* keys,
                       Clock* clock,
                       std::vector<std::weak_ptr<prometheus::Collectable>> collectables)
    : options_(options),
      model_(std::move(model)),
      dispatcher_(dispatcher),
      metrics_(metrics),
      keys_(keys),
      clock_(clock),
      collectables_(std::move(collectables)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  serving_ = false;
  if (context_ == nullptr) return;
  // CivetWeb's listening thread notices the stop only when its poll returns,
  // up to 2 s later; a connection of our own wakes it at once.
  std::atomic<bool> stopped{false};
  std::thread stopper([this, &stopped] {
    mg_stop(context_);
    stopped = true;
  });
  const std::string host = options_.host.empty() || options_.host == "0.0.0.0" ? "127.0.0.1"
                           : options_.host == "::"                             ? "::1"
                                                                               : options_.host;
  for (int i = 0; i < 200 && !stopped; ++i) {
    WakeListener(host, port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stopper.join();
  context_ = nullptr;
}

int HttpServer::Handle(mg_connection* connection) {
  const auto received = std::chrono::steady_clock::now();
  const mg_request_info* info = mg_get_request_info(connection);
  const absl::string_view method = info->request_method;
  const absl::string_view path = info->local_uri != nullptr ? info->local_uri : "";

  const RouteMatch match = MatchRoute(method, path);
  const Api api = ApiOfPath(path);
  if (match.outcome != RouteMatch::Outcome::kFound) {
    // The body is not read: close rather than parse it as the next request.
    Reply reply;
    if (match.outcome == RouteMatch::Outcome::kWrongMethod) {
      reply = ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                             method, " is not allowed on ", path, " (allowed: ", match.allow, ")")),
                         api, 405);
      reply.allow = match.allow;
    } else {
      reply = ErrorReply(absl::NotFoundError(absl::StrCat("no route ", method, " ", path)), api);
    }
    reply.close = true;
    Send(connection, reply);
    return reply.status;
  }
  const RouteInfo* route = match.route;

  if (route->counted) metrics_->RequestStarted();
  Reply reply;
  absl::StatusCode code = absl::StatusCode::kOk;
  const auto fail = [&](const absl::Status& status, int http_status = 0) {
    code = status.code();
    reply = ErrorReply(status, api, http_status);
  };
  const char* authorization = mg_get_header(connection, "Authorization");
  if (route->counted && !keys_->Accepts(authorization != nullptr ? authorization : "")) {
    fail(absl::UnauthenticatedError(
        "a valid API key is needed: send the header Authorization: Bearer KEY"));
    reply.close = true;  // the body is not read
  } else {
    switch (route->route) {
      case Route::kHealth:
        if (serving_ && dispatcher_->accepting()) {
          reply.content_type = nullptr;
        } else {
          fail(absl::UnavailableError("the server is not ready or is shutting down"));
        }
        break;
      case Route::kMetrics: {
        std::vector<prometheus::MetricFamily> families;
        for (const auto& weak : collectables_) {
          if (auto collectable = weak.lock()) {
            std::vector<prometheus::MetricFamily> collected = collectable->Collect();
            families.insert(families.end(), std::make_move_iterator(collected.begin()),
                            std::make_move_iterator(collected.end()));
          }
        }
        reply.body = prometheus::TextSerializer().Serialize(families);
        reply.content_type = "text/plain; version=0.0.4";
        break;
      }
      case Route::kModels:
      case Route::kModel:
      case Route::kInfo: {
        if (!dispatcher_->accepting()) {
          fail(absl::UnavailableError("server is shutting down"));
          break;
        }
        Json body;
        if (route->route == Route::kModels) {
          reply.body = RenderOpenAiModels(model_.name);
          break;
        } else if (route->route == Route::kModel) {
          absl::StatusOr<std::string> model = RenderOpenAiModel(match.argument, model_.name);
          if (model.ok()) {
            reply.body = *std::move(model);
          } else {
            fail(model.status(), 404);  // OpenAI's answer to another model's id
          }
          break;
        } else {
          body = {{"model_id", model_.name},
                  {"model_sha", nullptr},
                  {"model_dtype", model_.dtype},
                  {"model_type", {{"embedding", {{"pooling", model_.pooling}}}}},
                  {"max_concurrent_requests", options_.threads},
                  {"max_input_length", model_.max_input_length},
                  {"max_batch_tokens", model_.max_batch_tokens},
                  {"max_batch_requests", nullptr},
                  {"max_client_batch_size", model_.max_inputs_per_request},
                  {"auto_truncate", model_.auto_truncate},
                  {"tokenization_workers", options_.threads},
                  {"version", common::Version()}};
        }
        reply.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
        break;
      }
      case Route::kEmbeddings:
      case Route::kEmbed:
      case Route::kTokenize:
      case Route::kDecode: {
        int http_status = 0;
        absl::StatusOr<std::string> body =
            ReadBody(connection, options_.max_body_bytes, &http_status);
        if (!body.ok()) {
          reply.close = true;
          fail(body.status(), http_status);
          break;
        }
        if (route->route == Route::kDecode) {
          bool batched = false;
          absl::StatusOr<std::vector<core::DecodeRequest>> requests =
              ParseTeiDecode(*body, &batched);
          if (!requests.ok()) {
            fail(requests.status());
            break;
          }
          Json texts = Json::array();
          for (size_t i = 0; i < requests->size(); ++i) {
            absl::StatusOr<std::string> text = dispatcher_->Decode((*requests)[i]);
            if (!text.ok()) {
              fail(core::WithInputIndex(static_cast<int>(i), text.status()));
              break;
            }
            texts.push_back(*std::move(text));
          }
          if (code == absl::StatusCode::kOk) {
            reply.body =
                (batched ? texts : texts[0]).dump(-1, ' ', false, Json::error_handler_t::replace);
          }
          break;
        }
        if (route->route == Route::kTokenize) {
          absl::StatusOr<std::vector<core::TokenizeRequest>> requests = ParseTeiTokenize(*body);
          if (!requests.ok()) {
            fail(requests.status());
            break;
          }
          std::vector<engine::Encoding> encodings;
          for (size_t i = 0; i < requests->size(); ++i) {
            absl::StatusOr<engine::Encoding> encoding = dispatcher_->Tokenize((*requests)[i]);
            if (!encoding.ok()) {
              fail(core::WithInputIndex(static_cast<int>(i), encoding.status()));
              break;
            }
            encodings.push_back(*std::move(encoding));
          }
          if (code == absl::StatusCode::kOk) reply.body = RenderTeiTokenize(encodings);
          break;
        }
        absl::StatusOr<EmbeddingsCall> call =
            route->route == Route::kEmbed ? ParseTeiEmbed(*body, model_.hidden_size)
                                          : ParseOpenAiEmbeddings(*body, model_.hidden_size);
        if (!call.ok()) {
          fail(call.status());
          break;
        }
        // One vector per input: a model served without pooling has none.
        if (model_.pooling == "none") {
          fail(absl::InvalidArgumentError(
              "this model's pooling is none (token states): no embedding per input over HTTP"));
          break;
        }
        std::chrono::milliseconds timeout = options_.default_timeout;
        if (const char* header = mg_get_header(connection, "X-Request-Timeout-Ms")) {
          int64_t ms = 0;
          if (!absl::SimpleAtoi(header, &ms) || ms <= 0) {
            fail(absl::InvalidArgumentError(
                "X-Request-Timeout-Ms must be a positive number of milliseconds"));
            break;
          }
          timeout = std::chrono::milliseconds(ms);
        }
        auto promise = std::make_shared<std::promise<absl::StatusOr<core::EncodeResult>>>();
        std::future<absl::StatusOr<core::EncodeResult>> future = promise->get_future();
        dispatcher_->Dispatch(call->request, clock_->Now() + timeout, {},
                              [promise](absl::StatusOr<core::EncodeResult> result) {
                                promise->set_value(std::move(result));
                              });
        absl::StatusOr<core::EncodeResult> result = future.get();
        if (!result.ok()) {
          fail(ForEmbeddingsRoute(result.status(), api, call->input_is_list));
          break;
        }
        reply.body = route->route == Route::kEmbed
                         ? RenderTeiEmbed(*result, *call)
                         : RenderOpenAiEmbeddings(*result, *call, model_.name);
        break;
      }
    }
  }
  Send(connection, reply);
  if (route->counted) {
    metrics_->RequestFinished(core::Transport::kHttp, route->rpc, code,
                              std::chrono::steady_clock::now() - received);
  }
  return reply.status;
}

}  // namespace server::http
