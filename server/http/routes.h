// The HTTP routes as data: method, path (exact, or a prefix whose rest is an
// argument, as the model id of GET /v1/models/{id}) and how the metrics count
// it; the path also says which API's shapes it answers in. Matching is a pure
// function of method and path, so that it is unit-tested and outlives the
// HTTP library.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "server/core/metrics/metrics.h"
#include "server/http/http_errors.h"

namespace server::http {

enum class Route {
  kEmbeddings,
  kModels,
  kModel,
  kEmbed,
  kTokenize,
  kDecode,
  kInfo,
  kHealth,
  kMetrics,
  kRerank,        // TEI POST /rerank
  kCohereRerank,  // Cohere/Jina POST /v1/rerank
  kPredict,       // TEI POST /predict
  kEmbedSparse,   // TEI POST /embed_sparse
  kEmbedMulti,    // POST /embed_multi (dense, sparse and ColBERT outputs)
  kEmbedAll,      // TEI POST /embed_all
  kSimilarity,    // TEI POST /similarity
  kEmbedChunks,   // POST /embed_chunks (late chunking)
  kCohereEmbed    // Cohere POST /v2/embed (several embedding types at once)
};

struct RouteInfo {
  const char* method;
  const char* path;  // for a prefix route, up to its argument ("/v1/models/")
  bool prefix;       // the rest of the path, slashes included, is the argument
  Route route;
  bool counted;  // counted in the metrics and behind the API keys (not /health, /metrics)
  Rpc rpc;       // how the metrics name it
};

struct RouteMatch {
  enum class Outcome { kFound, kWrongMethod, kNotFound };
  Outcome outcome = Outcome::kNotFound;
  const RouteInfo* route = nullptr;  // kFound
  std::string argument;              // kFound on a prefix route: the rest of the path
  std::string allow;                 // kWrongMethod: the methods the path takes ("GET, POST")
};

RouteMatch MatchRoute(absl::string_view method, absl::string_view path);

// The API whose shapes a path answers in: OpenAI under /v1/, else TEI.
Api ApiOfPath(absl::string_view path);

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
