// POST /tokenize and /decode: answered on the handler thread, no batch.
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "server/core/api/input_error.h"
#include "server/http/json_fields.h"
#include "server/http/json_mapping.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::Decode(RouteCall call) {
  const Api api = call.api;
  bool batched = false;
  std::string name;
  absl::StatusOr<std::vector<core::DecodeRequest>> requests =
      ParseTeiDecode(call.request.body, &batched, &name);
  if (!requests.ok()) return call.done(ErrorReply(requests.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  nlohmann::json texts = nlohmann::json::array();
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<std::string> text = (*model)->dispatcher->Decode((*requests)[i]);
    if (!text.ok()) {
      return call.done(ErrorReply(core::WithInputIndex(static_cast<int>(i), text.status()), api));
    }
    texts.push_back(*std::move(text));
  }
  HttpReply reply;
  reply.body = Dump(batched ? texts : texts[0]);
  call.done(std::move(reply));
}

void RequestHandler::Tokenize(RouteCall call) {
  const Api api = call.api;
  std::string name;
  absl::StatusOr<std::vector<core::TokenizeRequest>> requests =
      ParseTeiTokenize(call.request.body, &name);
  if (!requests.ok()) return call.done(ErrorReply(requests.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  std::vector<engine::Encoding> encodings;
  for (size_t i = 0; i < requests->size(); ++i) {
    absl::StatusOr<engine::Encoding> encoding = (*model)->dispatcher->Tokenize((*requests)[i]);
    if (!encoding.ok()) {
      return call.done(
          ErrorReply(core::WithInputIndex(static_cast<int>(i), encoding.status()), api));
    }
    encodings.push_back(*std::move(encoding));
  }
  HttpReply reply;
  reply.body = RenderTeiTokenize(encodings);
  call.done(std::move(reply));
}

}  // namespace server::http
