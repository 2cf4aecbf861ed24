// POST /v1/embeddings (OpenAI), /embed, /embed_all and /similarity (TEI):
// encode requests on the shared queue.
#include <memory>
#include <utility>

#include "server/http/json_heads.h"
#include "server/http/json_mapping.h"
#include "server/http/request_handler.h"

namespace server::http {

void RequestHandler::Embeddings(RouteCall call) { EmbedRoute(Route::kEmbeddings, std::move(call)); }
void RequestHandler::Embed(RouteCall call) { EmbedRoute(Route::kEmbed, std::move(call)); }

void RequestHandler::EmbedRoute(Route route, RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<EmbeddingsCall> parsed =
      route == Route::kEmbed ? ParseTeiEmbed(call.request.body, model_.hidden_size)
                             : ParseOpenAiEmbeddings(call.request.body, model_.hidden_size);
  if (!parsed.ok()) return call.done(ErrorReply(parsed.status(), api));
  // One vector per input: a model served without pooling has none.
  if (model_.pooling == "none") {
    return call.done(
        ErrorReply(absl::InvalidArgumentError("this model's pooling is none (token states): no "
                                              "embedding per input over HTTP"),
                   api));
  }
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  auto embeddings = std::make_shared<EmbeddingsCall>(*std::move(parsed));
  dispatcher_->Dispatch(
      embeddings->request, *deadline, std::move(call.is_cancelled),
      [this, route, api, embeddings,
       done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        if (!result.ok()) {
          result = ForEmbeddingsRoute(result.status(), api, embeddings->input_is_list);
        }
        Answer<core::EncodeResult>(std::move(result), api, done,
                                   [this, route, embeddings](const core::EncodeResult& encoded) {
                                     return route == Route::kEmbed
                                                ? RenderTeiEmbed(encoded, *embeddings)
                                                : RenderOpenAiEmbeddings(encoded, *embeddings,
                                                                         model_.name);
                                   });
      });
}

void RequestHandler::EmbedAll(RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<core::EncodeRequest> request =
      ParseTeiEmbedAll(call.request.body, model_.hidden_size);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  dispatcher_->Dispatch(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        if (!result.ok()) {
          result = ForEmbeddingsRoute(result.status(), api, true);
        }
        Answer<core::EncodeResult>(std::move(result), api, done, &RenderTeiEmbedAll);
      });
}

void RequestHandler::Similarity(RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<core::EncodeRequest> request = ParseTeiSimilarity(call.request.body);
  if (!request.ok()) return call.done(ErrorReply(request.status(), api));
  if (model_.pooling == "none") {
    return call.done(ErrorReply(
        absl::InvalidArgumentError("this model's pooling is none (token states): no sentence "
                                   "embeddings to compare"),
        api));
  }
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  dispatcher_->Dispatch(
      *request, *deadline, std::move(call.is_cancelled),
      [this, api, done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        if (!result.ok()) {
          result = ForEmbeddingsRoute(result.status(), api, true);
        }
        Answer<core::EncodeResult>(std::move(result), api, done, &RenderTeiSimilarity);
      });
}

}  // namespace server::http
