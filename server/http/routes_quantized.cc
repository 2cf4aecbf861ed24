// POST /v2/embed (Cohere's embed, several embedding types from one engine
// pass), and /v1/embeddings and /embed with "embedding_type": the float
// answer quantized (server/core/model/quantize.h) before it is rendered.
#include <memory>
#include <utility>
#include <vector>

#include "server/http/core_call.h"
#include "server/http/route_handlers.h"
#include "server/http/routes_embed.h"

namespace server::http::handlers {
namespace {

// Whether each of `types` can be answered for vectors of `dimensions` (0:
// the model's embedding size): before any engine work.
absl::Status CheckTypes(const std::vector<core::EmbeddingType>& types, int dimensions,
                        const core::ModelDescription& model) {
  const int size = dimensions > 0 ? dimensions : model.embedding_size;
  for (core::EmbeddingType type : types) {
    RETURN_IF_ERROR(
        core::CheckQuantizable(type, model.quantization_ranges.get(), size, model.name));
  }
  return absl::OkStatus();
}

// The dispatch of a quantized route: the floats of the parsed body's
// request, quantized as `types_of` it asks on the batcher's thread (an error
// must be answered where it is made).
template <typename Parsed>
auto DispatchQuantized(std::vector<core::EmbeddingType> (*types_of)(const Parsed&)) {
  return [types_of](const core::ModelRoute& model, const Parsed& parsed,
                    core::Clock::time_point deadline, std::function<bool()> is_cancelled,
                    std::function<void(absl::StatusOr<QuantizedEmbeddings>)> done) {
    model.dispatcher->Dispatch(
        parsed.request, deadline, std::move(is_cancelled),
        [types = types_of(parsed), ranges = model.description.quantization_ranges,
         done = std::move(done)](absl::StatusOr<core::EncodeResult> result) {
          if (!result.ok()) return done(result.status());
          done(QuantizeEmbeddings(*std::move(result), types, ranges.get()));
        });
  };
}

}  // namespace

void ServeQuantizedEmbed(RouteCall call, EmbeddingsCall embeddings, QuantizedRender render) {
  CoreCall<EmbeddingsCall, QuantizedEmbeddings> quantized;
  quantized.inputs_listed = embeddings.input_is_list;
  quantized.parsed = std::move(embeddings);
  quantized.prepare = [](const core::ModelDescription& model,
                         EmbeddingsCall& parsed) -> absl::Status {
    RETURN_IF_ERROR(CheckOneVectorPerInput(model, parsed.dimensions));
    return CheckTypes({parsed.embedding_type}, parsed.dimensions, model);
  };
  quantized.dispatch = DispatchQuantized<EmbeddingsCall>(
      [](const EmbeddingsCall& parsed) { return std::vector{parsed.embedding_type}; });
  quantized.render = render;
  ServeCoreCall(std::move(call), std::move(quantized));
}

void CohereEmbed(RouteCall call) {
  CoreCall<CohereEmbedCall, QuantizedEmbeddings> embed;
  embed.parsed = ParseCohereEmbed(call.request().body);
  embed.prepare = [](const core::ModelDescription& model, CohereEmbedCall& parsed) -> absl::Status {
    RETURN_IF_ERROR(CheckOneVectorPerInput(model, parsed.request.dimensions));
    RETURN_IF_ERROR(CheckTypes(parsed.types, parsed.request.dimensions, model));
    parsed.request.prompt_name = PromptOfInputType(parsed.input_type, model.prompts);
    return absl::OkStatus();
  };
  embed.dispatch = DispatchQuantized<CohereEmbedCall>(
      [](const CohereEmbedCall& parsed) { return parsed.types; });
  embed.render = [](const QuantizedEmbeddings& quantized, const CohereEmbedCall& parsed,
                    const core::ModelDescription&) { return RenderCohereEmbed(quantized, parsed); };
  embed.inputs_listed = true;
  ServeCoreCall(std::move(call), std::move(embed));
}

}  // namespace server::http::handlers
