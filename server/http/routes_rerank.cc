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
  std::string name;
  absl::StatusOr<core::RerankRequest> request = cohere ? ParseCohereRerank(call.request.body, &name)
                                                       : ParseTeiRerank(call.request.body, &name);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  const auto documents = static_cast<int64_t>(request->texts.size());
  (*model)->dispatcher->DispatchRerank(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, cohere, documents, name = (*model)->description.name,
       done = std::move(call.done)](absl::StatusOr<core::RerankResult> result) mutable {
        Answer<core::RerankResult>(std::move(result), api, done,
                                   [cohere, documents, name](const core::RerankResult& ranked) {
                                     return cohere ? RenderCohereRerank(ranked, name, documents)
                                                   : RenderTeiRerank(ranked);
                                   });
      });
}

}  // namespace server::http
