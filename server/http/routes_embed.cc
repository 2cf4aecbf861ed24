// POST /v1/embeddings (OpenAI), /embed, /embed_all and /similarity (TEI):
// encode requests on the shared queue.
#include <limits>
#include <memory>
#include <utility>

#include "server/http/json_heads.h"
#include "server/http/json_mapping.h"
#include "server/http/request_handler.h"

namespace server::http {

absl::Status RequestHandler::CheckOneVectorPerInput(const ModelDescription& model, int dimensions) {
  if (absl::Status status = CheckDimensions(dimensions, model.embedding_size); !status.ok()) {
    return status;
  }
  // One vector per input: a model served without pooling has none.
  if (model.default_pooling == engine::Pooling::kNone) {
    return absl::InvalidArgumentError(
        "this model's pooling is none (token states): no embedding per input over HTTP");
  }
  return absl::OkStatus();
}
namespace {

// Parsing comes before the model is known: sizes are checked after.
constexpr int kAnySize = std::numeric_limits<int>::max();

}  // namespace

void RequestHandler::Embeddings(RouteCall call) { EmbedRoute(Route::kEmbeddings, std::move(call)); }
void RequestHandler::Embed(RouteCall call) { EmbedRoute(Route::kEmbed, std::move(call)); }

void RequestHandler::EmbedRoute(Route route, RouteCall call) {
  const Api api = call.api;
  // Parsed before the model is known: "dimensions" is checked against its
  // size below.
  absl::StatusOr<EmbeddingsCall> parsed = route == Route::kEmbed
                                              ? ParseTeiEmbed(call.request.body, kAnySize)
                                              : ParseOpenAiEmbeddings(call.request.body, kAnySize);
  if (!parsed.ok()) return call.done(ErrorReply(parsed.status(), api));
  absl::StatusOr<const ModelRoute*> resolved = Resolve(parsed->model, call);
  if (!resolved.ok()) return call.done(ErrorReply(resolved.status(), api));
  const ModelRoute& model = **resolved;
  if (absl::Status status = CheckOneVectorPerInput(model.description, parsed->dimensions);
      !status.ok()) {
    return call.done(ErrorReply(status, api));
  }
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  auto embeddings = std::make_shared<EmbeddingsCall>(*std::move(parsed));
  if (embeddings->embedding_type != core::EmbeddingType::kFloat) {
    return DispatchQuantizedEmbed(route, model, std::move(embeddings), *deadline, std::move(call));
  }
  model.dispatcher->Dispatch(
      embeddings->request, *deadline, std::move(call.is_cancelled),
      [this, route, api, embeddings, name = model.description.name,
       done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        if (!result.ok()) {
          result = ForEmbeddingsRoute(result.status(), api, embeddings->input_is_list);
        }
        Answer<core::EncodeResult>(
            std::move(result), api, done,
            [route, embeddings, name](const core::EncodeResult& encoded) {
              return route == Route::kEmbed ? RenderTeiEmbed(encoded, *embeddings)
                                            : RenderOpenAiEmbeddings(encoded, *embeddings, name);
            },
            &WindowsHeader);
      });
}

void RequestHandler::EmbedAll(RouteCall call) {
  std::string name;
  absl::StatusOr<core::EncodeRequest> request =
      ParseTeiEmbedAll(call.request.body, kAnySize, &name);
  DispatchListEncode(std::move(request), name, nullptr, std::move(call), &RenderTeiEmbedAll);
}

void RequestHandler::Similarity(RouteCall call) {
  std::string name;
  absl::StatusOr<core::EncodeRequest> request = ParseTeiSimilarity(call.request.body, &name);
  DispatchListEncode(std::move(request), name,
                     "this model's pooling is none (token states): no sentence embeddings to "
                     "compare",
                     std::move(call), &RenderTeiSimilarity);
}

void RequestHandler::DispatchListEncode(absl::StatusOr<core::EncodeRequest> request,
                                        const std::string& name, const char* needs_pooling,
                                        RouteCall call,
                                        std::string (*render)(const core::EncodeResult&)) {
  const Api api = call.api;
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<const ModelRoute*> model = Resolve(name, call);
  if (!model.ok()) return call.done(ErrorReply(model.status(), api));
  if (needs_pooling != nullptr && (*model)->description.default_pooling == engine::Pooling::kNone) {
    return call.done(ErrorReply(absl::InvalidArgumentError(needs_pooling), api));
  }
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  (*model)->dispatcher->Dispatch(*request, *deadline, std::move(call.is_cancelled),
                                 [this, api, render, done = std::move(call.done)](
                                     absl::StatusOr<core::EncodeResult> result) mutable {
                                   if (!result.ok())
                                     result = ForEmbeddingsRoute(result.status(), api, true);
                                   Answer<core::EncodeResult>(std::move(result), api, done, render);
                                 });
}

}  // namespace server::http
