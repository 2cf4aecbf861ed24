// POST /rerank (TEI) and /v1/rerank (Cohere v2 / Jina shapes): one query,
// many texts, scored by the model's cross-encoder on the shared queue.
#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_heads.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {
namespace {

using RerankCall = CoreCall<core::RerankRequest, core::RerankResult>;

RerankCall ParsedRerank(absl::StatusOr<core::RerankRequest> (*parse)(std::string_view,
                                                                     std::string*),
                        const RouteCall& call) {
  RerankCall rerank;
  rerank.parsed = parse(call.request().body, &rerank.model);
  rerank.dispatch = CallOf(&core::EncodeDispatcher::DispatchRerank);
  return rerank;
}

}  // namespace

void TeiRerank(RouteCall call) {
  RerankCall rerank = ParsedRerank(&ParseTeiRerank, call);
  rerank.render = [](const core::RerankResult& ranked, const auto&, const auto&) {
    return RenderTeiRerank(ranked);
  };
  ServeCoreCall(std::move(call), std::move(rerank));
}

void CohereRerank(RouteCall call) {
  RerankCall rerank = ParsedRerank(&ParseCohereRerank, call);
  rerank.render = [](const core::RerankResult& ranked, const core::RerankRequest& request,
                     const core::ModelDescription& model) {
    return RenderCohereRerank(ranked, model.name, static_cast<int64_t>(request.texts.size()));
  };
  ServeCoreCall(std::move(call), std::move(rerank));
}

}  // namespace server::http::handlers
