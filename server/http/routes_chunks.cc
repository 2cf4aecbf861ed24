// POST /embed_chunks: late chunking (server/core/requests/late_chunking.h) on the
// shared queue.
#include <memory>
#include <utility>

#include "server/http/json_chunks.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::EmbedChunks(RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<ChunksCall> parsed = ParseTeiEmbedChunks(call.request.body);
  if (!parsed.ok()) return call.done(ErrorReply(parsed.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(parsed->model, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  auto chunks = std::make_shared<ChunksCall>(*std::move(parsed));
  (*model)->dispatcher->DispatchChunks(
      chunks->request, *deadline, std::move(call.is_cancelled),
      [this, api, chunks,
       done = std::move(call.done)](absl::StatusOr<core::ChunksResult> result) mutable {
        Answer<core::ChunksResult>(std::move(result), api, done,
                                   [chunks](const core::ChunksResult& pooled) {
                                     return RenderTeiEmbedChunks(pooled, *chunks);
                                   });
      });
}

}  // namespace server::http
