// POST /v2/embed (Cohere's embed, several embedding types from one engine
// pass), and /v1/embeddings and /embed with "embedding_type": the float
// answer quantized (server/core/model/quantize.h) before it is rendered.
#include <memory>
#include <utility>

#include "server/http/json_quantized.h"
#include "server/http/request_handler.h"

namespace server::http {
namespace {

// Whether each of `types` can be answered for vectors of `dimensions` (0:
// the model's embedding size): before any engine work.
absl::Status CheckTypes(const std::vector<core::EmbeddingType>& types, int dimensions,
                        const ModelDescription& model) {
  const int size = dimensions > 0 ? dimensions : model.embedding_size;
  for (core::EmbeddingType type : types) {
    if (absl::Status status =
            core::CheckQuantizable(type, model.quantization_ranges.get(), size, model.name);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RequestHandler::DispatchQuantizedEmbed(Route route, const ModelRoute& model,
                                            std::shared_ptr<EmbeddingsCall> embeddings,
                                            Clock::time_point deadline, RouteCall call) {
  const Api api = call.api;
  std::vector<core::EmbeddingType> types = {embeddings->embedding_type};
  if (absl::Status status = CheckTypes(types, embeddings->dimensions, model.description);
      !status.ok()) {
    return call.done(ErrorReply(status, api));
  }
  model.dispatcher->Dispatch(
      embeddings->request, deadline, std::move(call.is_cancelled),
      [this, route, api, embeddings, types, ranges = model.description.quantization_ranges,
       name = model.description.name,
       done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        absl::StatusOr<QuantizedEmbeddings> quantized =
            result.ok() ? QuantizeEmbeddings(*std::move(result), types, ranges.get())
                        : absl::StatusOr<QuantizedEmbeddings>(
                              ForEmbeddingsRoute(result.status(), api, embeddings->input_is_list));
        Answer<QuantizedEmbeddings>(std::move(quantized), api, done,
                                    [route, embeddings, name](const QuantizedEmbeddings& q) {
                                      return route == Route::kEmbed
                                                 ? RenderTeiQuantized(q)
                                                 : RenderOpenAiQuantized(q, *embeddings, name);
                                    });
      });
}

void RequestHandler::CohereEmbed(RouteCall call) {
  const Api api = call.api;
  absl::StatusOr<CohereEmbedCall> parsed = ParseCohereEmbed(call.request.body);
  if (!parsed.ok()) return call.done(ErrorReply(parsed.status(), api));
  absl::StatusOr<const ModelRoute*> resolved = Resolve(parsed->model, call);
  if (!resolved.ok()) return call.done(ErrorReply(resolved.status(), api));
  const ModelRoute& model = **resolved;
  if (absl::Status status = CheckOneVectorPerInput(model.description, parsed->request.dimensions);
      !status.ok()) {
    return call.done(ErrorReply(status, api));
  }
  if (absl::Status status =
          CheckTypes(parsed->types, parsed->request.dimensions, model.description);
      !status.ok()) {
    return call.done(ErrorReply(status, api));
  }
  parsed->request.prompt_name = PromptOfInputType(parsed->input_type, model.description.prompts);
  absl::StatusOr<Clock::time_point> deadline = Deadline(call.request);
  if (!deadline.ok()) return call.done(ErrorReply(deadline.status(), api));
  auto embed = std::make_shared<CohereEmbedCall>(*std::move(parsed));
  model.dispatcher->Dispatch(
      embed->request, *deadline, std::move(call.is_cancelled),
      [this, api, embed, ranges = model.description.quantization_ranges,
       done = std::move(call.done)](absl::StatusOr<core::EncodeResult> result) mutable {
        absl::StatusOr<QuantizedEmbeddings> quantized =
            result.ok() ? QuantizeEmbeddings(*std::move(result), embed->types, ranges.get())
                        : absl::StatusOr<QuantizedEmbeddings>(
                              ForEmbeddingsRoute(result.status(), api, true));
        Answer<QuantizedEmbeddings>(
            std::move(quantized), api, done,
            [embed](const QuantizedEmbeddings& q) { return RenderCohereEmbed(q, *embed); });
      });
}

}  // namespace server::http
