// The HTTP route table: one line per route (routes.cc) with its method, path
// (exact, or a prefix whose rest is an argument, as the model id of GET
// /v1/models/{id}), the API family whose shapes it answers in, how the
// metrics name it, whether it is counted and behind the API keys, and its
// handler. It is the only list of routes: matching, the 405 Allow list, the
// start-up route list and the metrics all read it. Matching is a pure
// function of method and path, so that it is unit-tested and outlives the
// HTTP library.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "server/core/metrics/metrics.h"
#include "server/http/http_errors.h"

namespace server::http {

class RouteCall;
// What a route does with its call (route_handlers.h): answers it, once.
using RouteHandler = void (*)(RouteCall call);

struct RouteInfo {
  const char* method;
  const char* path;  // for a prefix route, up to its argument ("/v1/models/")
  bool prefix;       // the rest of the path, slashes included, is the argument
  Api api;           // whose shapes its answers and errors take
  core::Rpc rpc;     // how the metrics name it
  bool counted;      // counted in the metrics and behind the API keys (not /health, /metrics)
  RouteHandler handler;
};

struct RouteMatch {
  enum class Outcome { kFound, kWrongMethod, kNotFound };
  Outcome outcome = Outcome::kNotFound;
  const RouteInfo* route = nullptr;  // kFound
  std::string argument;              // kFound on a prefix route: the rest of the path
  std::string allow;                 // kWrongMethod: the methods the path takes ("GET, POST")
  // The family the answer's shapes come from: the route's (kFound), the
  // path's routes' (kWrongMethod); for a path no route takes, OpenAI's under
  // /v1/ (where OpenAI clients send everything), Cohere's under /v2/, else
  // TEI's.
  Api api = Api::kTei;
};

RouteMatch MatchRoute(absl::string_view method, absl::string_view path);

// The path of a request target: without its query ("?...") or fragment, with
// %XX escapes decoded ("/v1/models/BAAI%2Fbge-m3" is "/v1/models/BAAI/bge-m3");
// a malformed escape stays as it is.
std::string DecodePath(absl::string_view target);

// The value of the query parameter `name` in a request target
// ("/info?model=BAAI%2Fbge-m3" gives "BAAI/bge-m3" for "model"), %XX
// decoded; empty when absent.
std::string QueryParameter(absl::string_view target, absl::string_view name);

// Every route, for the start-up log: "POST /v1/embeddings, GET /v1/models, ...".
std::string RouteList();

}  // namespace server::http
