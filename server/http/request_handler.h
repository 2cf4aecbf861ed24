// What the HTTP routes do, without a socket: given a request's method, path
// and headers it decides whether the body is wanted (an unknown route or a
// missing API key is answered at once), and given the whole request it hands
// it to its route's handler (the route table, routes.cc), which answers
// exactly once through a callback. Encode requests go to the same
// EncodeDispatcher as gRPC's, so both share the queue and batches. Runs on
// the adapter's handler threads (JSON parsing, tokenization and rendering
// never run on the event loops); counts every counted route in the metrics.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "absl/status/status.h"
#include "server/core/batching/clock.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/http/http_errors.h"
#include "server/http/http_message.h"
#include "server/http/http_options.h"
#include "server/http/route_call.h"
#include "server/http/routes.h"

namespace server::http {

// A request whose headers are in: its route, or the answer that ends it.
struct Screening {
  const RouteInfo* route = nullptr;                // null when `reply` answers the request
  Api api = Api::kTei;                             // the shape of its answers (the route's family)
  std::string argument;                            // a prefix route's rest of the path
  std::optional<HttpReply> reply;                  // answered without reading the body
  std::chrono::steady_clock::time_point received;  // the headers' arrival
};

class RequestHandler {
 public:
  using Reply = RouteContext::Reply;
  using Post = RouteContext::Post;

  // All pointers must outlive the handler. Requests go to the model their
  // "model" field names (ServedModels::Resolve; with one model served,
  // OpenAI's and Cohere's "model" may name anything). `collectables` are what
  // GET /metrics exports.
  RequestHandler(const HttpOptions& options, const core::ServedModels* models, core::Clock* clock,
                 std::vector<std::weak_ptr<prometheus::Collectable>> collectables, Post post);

  // The route of `method` `path`; a reply (with close set: the body is not
  // read) for an unknown route, a wrong method or a missing API key.
  Screening Screen(const std::string& method, const std::string& path,
                   const std::string& authorization) const;

  // A counted request refused while its body was read (413 too large, 408
  // too slow, 400 malformed): its reply, counted, with close set.
  HttpReply RefuseBody(const Screening& screening, const absl::Status& status,
                       int http_status = 0) const;

  // Answers `request` (screened, body complete) through `done`, exactly once:
  // on this thread, or later from the batcher's thread by way of `post`.
  // `is_cancelled` (the client left) is polled before the engine runs it.
  void Handle(const Screening& screening, HttpRequest request, std::function<bool()> is_cancelled,
              Reply done);

  // /health: 200 while serving, 503 otherwise (from the start of shutdown).
  void SetServing(bool serving) { context_.serving = serving; }

 private:
  RouteContext context_;
  core::ServerMetrics* const metrics_;  // the first model's (a call moves to its own: Resolve)
};

}  // namespace server::http
