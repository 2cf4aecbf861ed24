// POST /predict (TEI): the model's classifier over texts or text pairs.
#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_heads.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {

void Predict(RouteCall call) {
  bool batched = false;
  CoreCall<core::ClassifyRequest, core::ClassifyResult> predict;
  predict.parsed = ParseTeiPredict(call.request().body, &batched, &predict.model);
  predict.dispatch = CallOf(&core::EncodeDispatcher::DispatchClassify);
  predict.render = [batched](const core::ClassifyResult& classified, const auto&, const auto&) {
    return RenderTeiPredict(classified, batched);
  };
  predict.inputs_listed = batched;
  ServeCoreCall(std::move(call), std::move(predict));
}

}  // namespace server::http::handlers
