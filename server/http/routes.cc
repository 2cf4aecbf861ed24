#include "server/http/routes.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace server::http {
namespace {

constexpr RouteInfo kRoutes[] = {
    {"POST", "/v1/embeddings", false, Route::kEmbeddings, true, Rpc::kEncode},
    {"GET", "/v1/models", false, Route::kModels, true, Rpc::kGetModelInfo},
    // Hub names hold a slash ("BAAI/bge-m3"): the whole rest is the id.
    {"GET", "/v1/models/", true, Route::kModel, true, Rpc::kGetModelInfo},
    {"POST", "/embed", false, Route::kEmbed, true, Rpc::kEncode},
    {"POST", "/tokenize", false, Route::kTokenize, true, Rpc::kTokenize},
    {"POST", "/decode", false, Route::kDecode, true, Rpc::kDecode},
    {"GET", "/info", false, Route::kInfo, true, Rpc::kGetModelInfo},
    {"POST", "/rerank", false, Route::kRerank, true, Rpc::kRerank},
    {"POST", "/v1/rerank", false, Route::kCohereRerank, true, Rpc::kRerank},
    {"POST", "/predict", false, Route::kPredict, true, Rpc::kClassify},
    {"POST", "/embed_sparse", false, Route::kEmbedSparse, true, Rpc::kEncodeSparse},
    {"POST", "/embed_multi", false, Route::kEmbedMulti, true, Rpc::kEncodeMulti},
    {"POST", "/embed_all", false, Route::kEmbedAll, true, Rpc::kEncode},
    {"POST", "/similarity", false, Route::kSimilarity, true, Rpc::kEncode},
    {"POST", "/embed_chunks", false, Route::kEmbedChunks, true, Rpc::kEncodeChunks},
    {"POST", "/v2/embed", false, Route::kCohereEmbed, true, Rpc::kEncode},
    {"GET", "/health", false, Route::kHealth, false, Rpc::kGetModelInfo},
    {"GET", "/metrics", false, Route::kMetrics, false, Rpc::kGetModelInfo},
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
      return match;
    }
    allowed.push_back(route.method);
  }
  if (!allowed.empty()) {
    match.outcome = RouteMatch::Outcome::kWrongMethod;
    match.allow = absl::StrJoin(allowed, ", ");
  }
  return match;
}

Api ApiOfPath(absl::string_view path) {
  return absl::StartsWith(path, "/v1/") ? Api::kOpenAi : Api::kTei;
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
