// POST /v1/embeddings (OpenAI), /embed, /embed_all and /similarity (TEI):
// encode requests on the shared queue.
#include "server/http/routes_embed.h"

#include <utility>

#include "server/http/core_call.h"
#include "server/http/json_heads.h"
#include "server/http/route_handlers.h"

namespace server::http::handlers {

absl::Status CheckOneVectorPerInput(const core::ModelDescription& model, int dimensions) {
  RETURN_IF_ERROR(CheckDimensions(dimensions, model.embedding_size));
  // One vector per input: a model served without pooling has none.
  if (model.default_pooling == engine::Pooling::kNone) {
    return absl::InvalidArgumentError(
        "this model's pooling is none (token states): no embedding per input over HTTP");
  }
  return absl::OkStatus();
}

namespace {

// How /v1/embeddings and /embed differ: their body and answer shapes.
struct EmbedShape {
  absl::StatusOr<EmbeddingsCall> (*parse)(std::string_view body, int hidden_size);
  std::string (*render)(const core::EncodeResult& result, const EmbeddingsCall& call,
                        const core::ModelDescription& model);
  QuantizedRender render_quantized;
};

void ServeEmbed(RouteCall call, const EmbedShape& shape) {
  // Parsed before the model is known: "dimensions" is checked against its
  // size once it is.
  absl::StatusOr<EmbeddingsCall> parsed = shape.parse(call.request().body, kAnySize);
  if (parsed.ok() && parsed->embedding_type != core::EmbeddingType::kFloat) {
    return ServeQuantizedEmbed(std::move(call), *std::move(parsed), shape.render_quantized);
  }
  CoreCall<EmbeddingsCall, core::EncodeResult> embed;
  if (parsed.ok()) embed.inputs_listed = parsed->input_is_list;
  embed.parsed = std::move(parsed);
  embed.prepare = [](const core::ModelDescription& model, EmbeddingsCall& embeddings) {
    return CheckOneVectorPerInput(model, embeddings.dimensions);
  };
  embed.dispatch = CallOf(&core::EncodeDispatcher::Dispatch);
  embed.render = shape.render;
  embed.windows = &WindowsHeader;
  ServeCoreCall(std::move(call), std::move(embed));
}

// /embed_all and /similarity: a list of inputs, parsed into an encode
// request, for a model `check` accepts.
void ServeListEncode(RouteCall call, absl::StatusOr<core::EncodeRequest> request, std::string model,
                     std::function<absl::Status(const core::ModelDescription&)> check,
                     std::string (*render)(const core::EncodeResult&)) {
  CoreCall<core::EncodeRequest, core::EncodeResult> encode;
  encode.parsed = std::move(request);
  encode.model = std::move(model);
  if (check) {
    encode.prepare = [check](const core::ModelDescription& described, core::EncodeRequest&) {
      return check(described);
    };
  }
  encode.dispatch = CallOf(&core::EncodeDispatcher::Dispatch);
  encode.render = [render](const core::EncodeResult& result, const auto&, const auto&) {
    return render(result);
  };
  encode.inputs_listed = true;
  ServeCoreCall(std::move(call), std::move(encode));
}

}  // namespace

void Embeddings(RouteCall call) {
  static constexpr EmbedShape kOpenAi = {
      &ParseOpenAiEmbeddings,
      [](const core::EncodeResult& result, const EmbeddingsCall& embeddings,
         const core::ModelDescription& model) {
        return RenderOpenAiEmbeddings(result, embeddings, model.name);
      },
      [](const QuantizedEmbeddings& quantized, const EmbeddingsCall& embeddings,
         const core::ModelDescription& model) {
        return RenderOpenAiQuantized(quantized, embeddings, model.name);
      }};
  ServeEmbed(std::move(call), kOpenAi);
}

void Embed(RouteCall call) {
  static constexpr EmbedShape kTei = {
      &ParseTeiEmbed,
      [](const core::EncodeResult& result, const EmbeddingsCall& embeddings,
         const core::ModelDescription&) { return RenderTeiEmbed(result, embeddings); },
      [](const QuantizedEmbeddings& quantized, const EmbeddingsCall&,
         const core::ModelDescription&) { return RenderTeiQuantized(quantized); }};
  ServeEmbed(std::move(call), kTei);
}

void EmbedAll(RouteCall call) {
  std::string model;
  absl::StatusOr<core::EncodeRequest> request =
      ParseTeiEmbedAll(call.request().body, kAnySize, &model);
  ServeListEncode(std::move(call), std::move(request), std::move(model), nullptr,
                  &RenderTeiEmbedAll);
}

void Similarity(RouteCall call) {
  std::string model;
  absl::StatusOr<core::EncodeRequest> request = ParseTeiSimilarity(call.request().body, &model);
  ServeListEncode(
      std::move(call), std::move(request), std::move(model),
      [](const core::ModelDescription& described) {
        return described.default_pooling == engine::Pooling::kNone
                   ? absl::InvalidArgumentError(
                         "this model's pooling is none (token states): no sentence embeddings "
                         "to compare")
                   : absl::OkStatus();
      },
      &RenderTeiSimilarity);
}

}  // namespace server::http::handlers
