// POST /embed_chunks: late chunking (server/core/requests/late_chunking.h) on the
// shared queue.
#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_chunks.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {

void EmbedChunks(RouteCall call) {
  CoreCall<ChunksCall, core::ChunksResult> chunks;
  chunks.parsed = ParseTeiEmbedChunks(call.request().body);
  chunks.dispatch = CallOf(&core::EncodeDispatcher::DispatchChunks);
  chunks.render = [](const core::ChunksResult& pooled, const ChunksCall& parsed, const auto&) {
    return RenderTeiEmbedChunks(pooled, parsed);
  };
  ServeCoreCall(std::move(call), std::move(chunks));
}

}  // namespace server::http::handlers
