// POST /embed_sparse (TEI): SPLADE weights of a model with its masked-LM head.
#include <limits>
#include <utility>

#include "server/http/json_heads.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::EmbedSparse(RouteCall call) {
  const Api api = call.api;
  std::string name;
  absl::StatusOr<core::SparseRequest> request =
      ParseTeiEmbedSparse(call.request.body, std::numeric_limits<int>::max(), &name);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  (*model)->dispatcher->DispatchSparse(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, done = std::move(call.done)](absl::StatusOr<core::SparseResult> result) mutable {
        if (!result.ok()) result = ForEmbeddingsRoute(result.status(), api, true);
        Answer<core::SparseResult>(std::move(result), api, done, &RenderTeiEmbedSparse);
      });
}

}  // namespace server::http
