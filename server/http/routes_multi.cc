// POST /embed_multi: several outputs of one pass (bge-m3's dense, sparse and
// ColBERT outputs).
#include <memory>
#include <string>
#include <utility>

#include "server/http/json_multi.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::EmbedMulti(RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<MultiCall> parsed = ParseEmbedMulti(call.request.body);
  if (!parsed.ok()) return call.done(ErrorReply(parsed.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(parsed->model, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  auto kept = std::make_shared<MultiCall>();
  kept->base64 = parsed->base64;
  kept->request.dense = parsed->request.dense;
  kept->request.sparse = parsed->request.sparse;
  kept->request.colbert = parsed->request.colbert;
  kept->request.return_tokens = parsed->request.return_tokens;
  const std::string served = (*model)->description.name;
  (*model)->dispatcher->DispatchMulti(
      parsed->request, *deadline, std::move(call.is_cancelled),
      [this, api, kept, served,
       done = std::move(call.done)](absl::StatusOr<core::MultiResult> result) mutable {
        if (!result.ok()) result = ForEmbeddingsRoute(result.status(), api, true);
        Answer<core::MultiResult>(std::move(result), api, done,
                                  [kept, served](const core::MultiResult& r) {
                                    return RenderEmbedMulti(r, *kept, served);
                                  });
      });
}

}  // namespace server::http
