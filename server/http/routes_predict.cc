// POST /predict (TEI): the model's classifier over texts or text pairs.
#include <utility>

#include "server/http/json_heads.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::Predict(RouteCall call) {
  const Api api = call.api;
  bool batched = false;
  std::string name;
  absl::StatusOr<core::ClassifyRequest> request =
      ParseTeiPredict(call.request.body, &batched, &name);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  (*model)->dispatcher->DispatchClassify(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, batched,
       done = std::move(call.done)](absl::StatusOr<core::ClassifyResult> result) mutable {
        if (!result.ok()) result = ForEmbeddingsRoute(result.status(), api, batched);
        Answer<core::ClassifyResult>(std::move(result), api, done,
                                     [batched](const core::ClassifyResult& classified) {
                                       return RenderTeiPredict(classified, batched);
                                     });
      });
}

}  // namespace server::http
