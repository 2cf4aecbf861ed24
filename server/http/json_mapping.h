// JSON <-> the core's types for the HTTP routes: OpenAI's /v1/embeddings and
// text-embeddings-inference's /embed and /tokenize. Pure functions of the
// body (no sockets), so that they are unit-tested and fuzzed alone. Parse
// errors are INVALID_ARGUMENT naming the field ("input[3]"), with OpenAI's
// "param" and "code" attached (http_errors.h); invalid JSON is named by
// line, column and byte, with what the parser expected there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/model/quantize.h"

namespace server::http {

// A parsed embeddings request of either API.
struct EmbeddingsCall {
  core::EncodeRequest request;
  int dimensions = 0;          // Matryoshka: keep the first N components, re-normalized; 0: all
  bool base64 = false;         // OpenAI encoding_format "base64": little-endian float32
  std::string model;           // as the client named it ("model"); answered with the served name
  bool input_is_list = false;  // a list of inputs (errors name "input[i]"), not one input
  // The extension "embedding_type" (json_quantized.h): float unless asked.
  core::EmbeddingType embedding_type = core::EmbeddingType::kFloat;
};

// OpenAI: {"input": string | string[] | int[] | int[][], "model": string,
// "encoding_format": "float" | "base64", "dimensions": int, "user": string},
// and as extensions TEI's "truncate": bool and "truncation_direction"
// ("Right" | "Left", or lower-case); without "truncate" the server's
// --auto-truncate decides. Vectors are L2-normalized, as OpenAI's are.
// `hidden_size` bounds dimensions.
absl::StatusOr<EmbeddingsCall> ParseOpenAiEmbeddings(std::string_view body, int hidden_size);

// Whether `dimensions` (parsed) fits a model of `hidden_size` (when the
// parse above was given a larger bound, before the model was known).
absl::Status CheckDimensions(int dimensions, int hidden_size);

// TEI: {"inputs": string | string[] | int[] | int[][], "normalize": bool
// (true), "truncate": bool (unset: --auto-truncate), "truncation_direction":
// "Right" | "Left" (or lower-case), "prompt_name": a key of the model's
// prompts, "dimensions": int, "model": the served model's name}.
absl::StatusOr<EmbeddingsCall> ParseTeiEmbed(std::string_view body, int hidden_size);

// TEI /tokenize: {"inputs": string | string[], "add_special_tokens": bool
// (true; false: the text's tokens alone)}.
// `model` (may be null) gets the "model" field (empty when absent).
absl::StatusOr<std::vector<core::TokenizeRequest>> ParseTeiTokenize(std::string_view body,
                                                                    std::string* model = nullptr);
// TEI's /decode: "ids" one list of ids or a list of them; "skip_special_tokens"
// (default true). `batched` tells whether to answer with a list.
absl::StatusOr<std::vector<core::DecodeRequest>> ParseTeiDecode(std::string_view body,
                                                                bool* batched,
                                                                std::string* model = nullptr);

// The first `dimensions` components of `values`, L2-normalized again (all of
// them when dimensions is 0 or not smaller).
std::vector<float> Matryoshka(const std::vector<float>& values, int dimensions);

// Little-endian float32 bytes, base64 (standard alphabet, padded).
std::string Base64Floats(const std::vector<float>& values);

// {"object":"list","data":[{"object":"embedding","index":i,"embedding":...}],
//  "model":..., "usage":{"prompt_tokens":n,"total_tokens":n}}
std::string RenderOpenAiEmbeddings(const core::EncodeResult& result, const EmbeddingsCall& call,
                                   const std::string& served_model);

// Window mode's X-Windows header: each input's window count, comma-separated
// ("2,1"); empty (no header) when not in window mode.
std::string WindowsHeader(const core::EncodeResult& result);

// [[f, ...], ...]: one vector per input.
std::string RenderTeiEmbed(const core::EncodeResult& result, const EmbeddingsCall& call);

// GET /v1/models: {"object":"list","data":[MODEL, ...]}, MODEL OpenAI's model
// object {"id","object":"model","created","owned_by"} of each served model.
std::string RenderOpenAiModels(const std::vector<std::string>& served_models);
// GET /v1/models/{id}: MODEL when `id` is a served model's name, else
// INVALID_ARGUMENT (answered 404) with OpenAI's model_not_found.
absl::StatusOr<std::string> RenderOpenAiModel(const std::string& id,
                                              const std::vector<std::string>& served_models);

// [[{"id","text","special","start","stop"}, ...], ...]: one list per input.
// The body as a JSON object (errors as every route words them), for the
// mappings of other files (json_heads.h).
absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view body);

std::string RenderTeiTokenize(const std::vector<engine::Encoding>& encodings);

}  // namespace server::http
