// POST /embed_sparse (TEI): SPLADE weights of a model with its masked-LM head.
#include <limits>
#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_heads.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {

void EmbedSparse(RouteCall call) {
  CoreCall<core::SparseRequest, core::SparseResult> sparse;
  sparse.parsed =
      ParseTeiEmbedSparse(call.request().body, std::numeric_limits<int>::max(), &sparse.model);
  sparse.dispatch = CallOf(&core::EncodeDispatcher::DispatchSparse);
  sparse.render = [](const core::SparseResult& result, const auto&, const auto&) {
    return RenderTeiEmbedSparse(result);
  };
  sparse.inputs_listed = true;
  ServeCoreCall(std::move(call), std::move(sparse));
}

}  // namespace server::http::handlers
