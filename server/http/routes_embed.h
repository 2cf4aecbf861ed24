// What the embedding routes of routes_embed.cc and routes_quantized.cc share.
#pragma once

#include <limits>
#include <string>

#include "absl/status/status.h"
#include "server/core/model_set.h"
#include "server/http/json_mapping.h"
#include "server/http/json_quantized.h"
#include "server/http/route_call.h"

namespace server::http::handlers {

// Parsing comes before the model is known: sizes are checked after.
inline constexpr int kAnySize = std::numeric_limits<int>::max();

// OK when `model` gives one vector per input, of at least `dimensions`.
absl::Status CheckOneVectorPerInput(const core::ModelDescription& model, int dimensions);

// How /v1/embeddings or /embed renders an answer of "embedding_type" int8,
// uint8, binary or ubinary.
using QuantizedRender = std::string (*)(const QuantizedEmbeddings& quantized,
                                        const EmbeddingsCall& call,
                                        const core::ModelDescription& model);

// /v1/embeddings and /embed whose "embedding_type" asks for a quantized type:
// checked against the model's calibration before dispatch, the floats
// quantized before they are rendered (routes_quantized.cc).
void ServeQuantizedEmbed(RouteCall call, EmbeddingsCall embeddings, QuantizedRender render);

}  // namespace server::http::handlers
