// POST /embed_multi: several outputs of one pass (bge-m3's dense, sparse and
// ColBERT outputs).
#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_multi.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {

void EmbedMulti(RouteCall call) {
  CoreCall<MultiCall, core::MultiResult> multi;
  multi.parsed = ParseEmbedMulti(call.request().body);
  multi.dispatch = CallOf(&core::EncodeDispatcher::DispatchMulti);
  multi.render = [](const core::MultiResult& result, const MultiCall& parsed,
                    const core::ModelDescription& model) {
    return RenderEmbedMulti(result, parsed, model.name);
  };
  multi.inputs_listed = true;
  ServeCoreCall(std::move(call), std::move(multi));
}

}  // namespace server::http::handlers
