// POST /rerank (TEI) and /v1/rerank (Cohere v2 / Jina shapes): one query,
// many texts, scored by the model's cross-encoder on the shared queue.
#include <memory>
#include <utility>

#include "server/http/json_heads.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::Rerank(RouteCall call) { RerankRoute(false, std::move(call)); }
void RequestHandler::CohereRerank(RouteCall call) { RerankRoute(true, std::move(call)); }

void RequestHandler::RerankRoute(bool cohere, RouteCall call) {
  const Api api = call.api;
  std::string model = model_.name;
  absl::StatusOr<core::RerankRequest> request =
      cohere ? ParseCohereRerank(call.request.body, &model) : ParseTeiRerank(call.request.body);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  const auto documents = static_cast<int64_t>(request->texts.size());
  // The served name answers, as on /v1/embeddings (model selection is not this route's).
  dispatcher_->DispatchRerank(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, cohere, documents,
       done = std::move(call.done)](absl::StatusOr<core::RerankResult> result) mutable {
        Answer<core::RerankResult>(std::move(result), api, done,
                                   [this, cohere, documents](const core::RerankResult& ranked) {
                                     return cohere
                                                ? RenderCohereRerank(ranked, model_.name, documents)
                                                : RenderTeiRerank(ranked);
                                   });
      });
}

}  // namespace server::http
