// What the HTTP routes do, without a socket: given a request's method, path
// and headers it decides whether the body is wanted (an unknown route or a
// missing API key is answered at once), and given the whole request it
// answers, exactly once, through a callback. Encode requests go to the same
// EncodeDispatcher as gRPC's, so both share the queue and batches. Runs on
// the adapter's handler threads (JSON parsing, tokenization and rendering
// never run on the event loops); counts every counted route in the metrics.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/clock.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/http/http_errors.h"
#include "server/http/http_message.h"
#include "server/http/http_options.h"
#include "server/http/json_mapping.h"
#include "server/http/routes.h"

namespace server::http {

// A request whose headers are in: its route, or the answer that ends it.
struct Screening {
  const RouteInfo* route = nullptr;  // null when `reply` answers the request
  Api api = Api::kTei;
  std::string argument;                            // a prefix route's rest of the path
  std::optional<HttpReply> reply;                  // answered without reading the body
  std::chrono::steady_clock::time_point received;  // the headers' arrival
};

class RequestHandler {
 public:
  using Reply = std::function<void(HttpReply)>;
  // Runs a piece of work on the handler threads (rendering an answer that the
  // batcher's thread delivered).
  using Post = std::function<void(std::function<void()>)>;

  // All pointers must outlive the handler. Requests go to the model their
  // "model" field names (ServedModels::Resolve; with one model served,
  // OpenAI's "model" may name anything). `collectables` are what GET
  // /metrics exports.
  RequestHandler(const HttpOptions& options, const ServedModels* models, Clock* clock,
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
  void SetServing(bool serving) { serving_ = serving; }

 private:
  // What a route handler gets: the screened request, whole, and where its
  // one answer goes (counted there).
  struct RouteCall {
    Route route = Route::kHealth;
    Api api = Api::kTei;
    std::string argument;  // a prefix route's rest of the path
    HttpRequest request;
    std::function<bool()> is_cancelled;
    Reply done;
    // Which model's metrics count the call: the first model's until the
    // request names its own (Resolve).
    std::shared_ptr<ServerMetrics*> meter;
  };
  using RouteHandler = void (RequestHandler::*)(RouteCall call);
  // The handler of each Route (request_handler.cc's table).
  static RouteHandler HandlerOf(Route route);

  // routes_info.cc: GET /health, /metrics, /info, /v1/models, /v1/models/{id}.
  void Health(RouteCall call);
  void Metrics(RouteCall call);
  void ModelInfo(RouteCall call);
  // routes_tokens.cc: POST /tokenize, /decode.
  void Tokenize(RouteCall call);
  void Decode(RouteCall call);
  // routes_embed.cc: POST /v1/embeddings, /embed, /embed_all, /similarity.
  // OK when `model` gives one vector per input, of at least `dimensions`.
  static absl::Status CheckOneVectorPerInput(const ModelDescription& model, int dimensions);
  void Embeddings(RouteCall call);
  void Embed(RouteCall call);
  void EmbedAll(RouteCall call);
  void Similarity(RouteCall call);
  void EmbedRoute(Route route, RouteCall call);
  // The tail of /embed_all and /similarity: `request` (parsed, for the model
  // `name`, which needs a pooling when `needs_pooling` says why) under the
  // call's deadline, answered as render(result) or the error (a list input).
  void DispatchListEncode(absl::StatusOr<core::EncodeRequest> request, const std::string& name,
                          const char* needs_pooling, RouteCall call,
                          std::string (*render)(const core::EncodeResult&));
  // routes_rerank.cc: POST /rerank (TEI), /v1/rerank (Cohere/Jina).
  void Rerank(RouteCall call);
  void CohereRerank(RouteCall call);
  void RerankRoute(bool cohere, RouteCall call);
  // routes_predict.cc: POST /predict.
  void Predict(RouteCall call);
  // routes_sparse.cc: POST /embed_sparse.
  void EmbedSparse(RouteCall call);
  // routes_multi.cc: POST /embed_multi.
  void EmbedMulti(RouteCall call);
  // routes_chunks.cc: POST /embed_chunks (late chunking).
  void EmbedChunks(RouteCall call);
  // routes_quantized.cc: POST /v2/embed (Cohere), and the tail of
  // /v1/embeddings and /embed when "embedding_type" asks for a quantized
  // type (checked against the model's calibration before dispatch).
  void CohereEmbed(RouteCall call);
  void DispatchQuantizedEmbed(Route route, const ModelRoute& model,
                              std::shared_ptr<EmbeddingsCall> embeddings,
                              Clock::time_point deadline, RouteCall call);

  // The model `name` names (the JSON body's "model", else the query's
  // ?model=; with one model served, OpenAI's may name anything), now
  // counting `call`.
  absl::StatusOr<const ModelRoute*> Resolve(std::string name, const RouteCall& call) const;

  // The call's deadline from X-Request-Timeout-Ms, else the default timeout.
  absl::StatusOr<Clock::time_point> Deadline(const HttpRequest& request) const;
  // Renders `result` on the handler threads and answers `done` there;
  // answers an error at once (on the calling thread, the batcher's).
  // `windows`, when given, renders the X-Windows header.
  template <typename Result>
  void Answer(absl::StatusOr<Result> result, Api api, Reply& done,
              std::function<std::string(const Result&)> render,
              std::function<std::string(const Result&)> windows = nullptr);

  const HttpOptions options_;
  const ServedModels* const models_;
  ServerMetrics* const metrics_;  // the first model's (see Meter)
  Clock* const clock_;
  const std::vector<std::weak_ptr<prometheus::Collectable>> collectables_;
  const Post post_;
  std::atomic<bool> serving_{true};
};

// An error reply in `api`'s shape (the HTTP status from the error's code
// unless given), counted as the error's code.
HttpReply ErrorReply(const absl::Status& status, Api api, int http_status = 0);

template <typename Result>
void RequestHandler::Answer(absl::StatusOr<Result> result, Api api, Reply& done,
                            std::function<std::string(const Result&)> render,
                            std::function<std::string(const Result&)> windows) {
  // Moved out: once answered, the batcher's copy of the callback holds no
  // reference to the connection.
  Reply answer = std::move(done);
  // An error becomes its reply here: an absl::Status must not cross threads,
  // as its shared payloads are counted in uninstrumented Abseil code that
  // ThreadSanitizer cannot see. Rendering goes to the handler threads, so
  // that the batcher goes on at once.
  if (!result.ok()) return answer(ErrorReply(result.status(), api));
  post_([answer = std::move(answer), render = std::move(render), windows = std::move(windows),
         result = *std::move(result)]() {
    HttpReply reply;
    reply.body = render(result);
    if (windows) reply.windows = windows(result);
    answer(std::move(reply));
  });
}

}  // namespace server::http
