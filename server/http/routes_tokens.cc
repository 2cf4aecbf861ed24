// POST /tokenize and /decode: answered on the handler thread, no batch.
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "server/core/api/input_error.h"
#include "server/http/json_fields.h"
#include "server/http/json_mapping.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {
namespace {

absl::StatusOr<std::string> Decoded(RouteCall& call) {
  bool batched = false;
  std::string name;
  ASSIGN_OR_RETURN(const std::vector<core::DecodeRequest> requests,
                   ParseTeiDecode(call.request().body, &batched, &name));
  ASSIGN_OR_RETURN(const core::ModelRoute* model, call.Resolve(name));
  nlohmann::json texts = nlohmann::json::array();
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSIGN_OR_RETURN(std::string text, model->dispatcher->Decode(requests[i]),
                     core::WithInputIndex(static_cast<int>(i), _));
    texts.push_back(std::move(text));
  }
  return Dump(batched ? texts : texts[0]);
}

absl::StatusOr<std::string> Tokenized(RouteCall& call) {
  std::string name;
  ASSIGN_OR_RETURN(const std::vector<core::TokenizeRequest> requests,
                   ParseTeiTokenize(call.request().body, &name));
  ASSIGN_OR_RETURN(const core::ModelRoute* model, call.Resolve(name));
  std::vector<engine::Encoding> encodings;
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSIGN_OR_RETURN(engine::Encoding encoding, model->dispatcher->Tokenize(requests[i]),
                     core::WithInputIndex(static_cast<int>(i), _));
    encodings.push_back(std::move(encoding));
  }
  return RenderTeiTokenize(encodings);
}

}  // namespace

void Decode(RouteCall call) { call.Answer(Decoded(call)); }
void Tokenize(RouteCall call) { call.Answer(Tokenized(call)); }

}  // namespace server::http::handlers
