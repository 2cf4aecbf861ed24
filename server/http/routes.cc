#include "server/http/routes.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/http/route_handlers.h"

namespace server::http {
namespace {

using core::Rpc;

// Every route. Adding one over an existing core call: its handler
// (route_handlers.h, routes_<family>.cc) and its line here.
constexpr RouteInfo kRoutes[] = {
    // method, path, prefix, family, metrics name, counted and behind the keys, handler
    {"POST", "/v1/embeddings", false, Api::kOpenAi, Rpc::kEncode, true, &handlers::Embeddings},
    {"GET", "/v1/models", false, Api::kOpenAi, Rpc::kGetModelInfo, true, &handlers::ListModels},
    // Hub names hold a slash ("BAAI/bge-m3"): the whole rest is the id.
    {"GET", "/v1/models/", true, Api::kOpenAi, Rpc::kGetModelInfo, true, &handlers::GetModel},
    {"POST", "/embed", false, Api::kTei, Rpc::kEncode, true, &handlers::Embed},
    {"POST", "/tokenize", false, Api::kTei, Rpc::kTokenize, true, &handlers::Tokenize},
    {"POST", "/decode", false, Api::kTei, Rpc::kDecode, true, &handlers::Decode},
    {"GET", "/info", false, Api::kTei, Rpc::kGetModelInfo, true, &handlers::Info},
    {"POST", "/rerank", false, Api::kTei, Rpc::kRerank, true, &handlers::TeiRerank},
    {"POST", "/v1/rerank", false, Api::kCohere, Rpc::kRerank, true, &handlers::CohereRerank},
    {"POST", "/predict", false, Api::kTei, Rpc::kClassify, true, &handlers::Predict},
    {"POST", "/embed_sparse", false, Api::kTei, Rpc::kEncodeSparse, true, &handlers::EmbedSparse},
    {"POST", "/embed_multi", false, Api::kTei, Rpc::kEncodeMulti, true, &handlers::EmbedMulti},
    {"POST", "/embed_all", false, Api::kTei, Rpc::kEncode, true, &handlers::EmbedAll},
    {"POST", "/similarity", false, Api::kTei, Rpc::kEncode, true, &handlers::Similarity},
    {"POST", "/embed_chunks", false, Api::kTei, Rpc::kEncodeChunks, true, &handlers::EmbedChunks},
    {"POST", "/v2/embed", false, Api::kCohere, Rpc::kEncode, true, &handlers::CohereEmbed},
    {"GET", "/health", false, Api::kNone, Rpc::kGetModelInfo, false, &handlers::Health},
    {"GET", "/metrics", false, Api::kNone, Rpc::kGetModelInfo, false, &handlers::Metrics},
};

// The argument of `route` in `path`, if the path is the route's.
bool PathMatches(const RouteInfo& route, absl::string_view path, absl::string_view* argument) {
  if (!route.prefix) return path == route.path;
  // An empty id ("/v1/models/") is no model's: not this route.
  if (!absl::StartsWith(path, route.path) || path.size() == absl::string_view(route.path).size()) {
    return false;
  }
  *argument = path.substr(absl::string_view(route.path).size());
  return true;
}

// The family of a path no route takes: where that API's clients send.
Api ApiOfUnroutedPath(absl::string_view path) {
  if (absl::StartsWith(path, "/v1/")) return Api::kOpenAi;
  if (absl::StartsWith(path, "/v2/")) return Api::kCohere;
  return Api::kTei;
}

}  // namespace

RouteMatch MatchRoute(absl::string_view method, absl::string_view path) {
  RouteMatch match;
  std::vector<std::string> allowed;
  for (const RouteInfo& route : kRoutes) {
    absl::string_view argument;
    if (!PathMatches(route, path, &argument)) continue;
    if (method == route.method) {
      match.outcome = RouteMatch::Outcome::kFound;
      match.route = &route;
      match.argument = std::string(argument);
      match.api = route.api;
      return match;
    }
    if (allowed.empty()) match.api = route.api;
    allowed.push_back(route.method);
  }
  if (!allowed.empty()) {
    match.outcome = RouteMatch::Outcome::kWrongMethod;
    match.allow = absl::StrJoin(allowed, ", ");
  } else {
    match.api = ApiOfUnroutedPath(path);
  }
  return match;
}

std::string DecodePath(absl::string_view target) {
  target = target.substr(0, target.find_first_of("?#"));
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string path;
  path.reserve(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == '%' && i + 2 < target.size() && hex(target[i + 1]) >= 0 &&
        hex(target[i + 2]) >= 0) {
      path += static_cast<char>(hex(target[i + 1]) * 16 + hex(target[i + 2]));
      i += 2;
    } else {
      path += target[i];
    }
  }
  return path;
}

std::string QueryParameter(absl::string_view target, absl::string_view name) {
  const size_t question = target.find('?');
  if (question == absl::string_view::npos) return "";
  absl::string_view query = target.substr(question + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const absl::string_view pair = query.substr(0, amp);
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == name) {
      // DecodePath decodes %XX (and would cut at '?' or '#', which a query
      // value does not hold unescaped).
      return equals == absl::string_view::npos ? "" : DecodePath(pair.substr(equals + 1));
    }
    if (amp == absl::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

std::string RouteList() {
  std::vector<std::string> routes;
  for (const RouteInfo& route : kRoutes) {
    routes.push_back(absl::StrCat(route.method, " ", route.path, route.prefix ? "{id}" : ""));
  }
  return absl::StrJoin(routes, ", ");
}

}  // namespace server::http
