// Quantized embeddings over HTTP (server/core/model/quantize.h): the
// "embedding_type" extension of OpenAI's /v1/embeddings and TEI's /embed, and
// Cohere's POST /v2/embed with its "embedding_types", in JSON.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/api/service_types.h"
#include "server/core/model/quantize.h"
#include "server/http/json_mapping.h"

namespace server::http {

// "embedding_type": "float" | "int8" | "uint8" | "binary" | "ubinary"
// (absent or null: float) into `type`.
absl::Status EmbeddingTypeField(const nlohmann::json& body, core::EmbeddingType* type);

// An encode result with each output quantized as each of `types` asks:
// bytes[t][i] holds output i as types[t] (empty for float, whose values are
// the result's own).
struct QuantizedEmbeddings {
  core::EncodeResult result;
  std::vector<core::EmbeddingType> types;
  std::vector<std::vector<std::string>> bytes;
};
absl::StatusOr<QuantizedEmbeddings> QuantizeEmbeddings(core::EncodeResult result,
                                                       std::vector<core::EmbeddingType> types,
                                                       const core::QuantizationRanges* ranges);

// OpenAI's list with each "embedding" the integers of call.embedding_type,
// or with "encoding_format": "base64" the base64 of its bytes.
std::string RenderOpenAiQuantized(const QuantizedEmbeddings& quantized, const EmbeddingsCall& call,
                                  const std::string& served_model);
// TEI: [[int, ...], ...], one list per input.
std::string RenderTeiQuantized(const QuantizedEmbeddings& quantized);

// Cohere v2 embed: {"model", "texts": [string], "input_type": "search_document"
// | "search_query" | "classification" | "clustering", "embedding_types":
// ["float" | "int8" | "uint8" | "binary" | "ubinary", ...] (default
// ["float"]), "truncate": "NONE" | "START" | "END" (default END),
// "output_dimension": int (Matryoshka)}.
struct CohereEmbedCall {
  core::EncodeRequest request;  // texts, truncation, dimensions; normalized
  std::string model;
  std::string input_type;  // as given ("" when absent)
  std::vector<core::EmbeddingType> types;
  std::vector<std::string> texts;
};
absl::StatusOr<CohereEmbedCall> ParseCohereEmbed(std::string_view body);

// The model prompt Cohere's input_type selects: search_query -> "query",
// search_document -> "document", classification and clustering -> the
// prompt of that name, when the model has it; else "" (none).
std::string PromptOfInputType(const std::string& input_type,
                              const std::map<std::string, std::string>& prompts);

// {"id", "embeddings": {TYPE: [[...], ...], ...}, "texts", "meta":
// {"api_version": {"version": "2"}, "billed_units": {"input_tokens": N}},
// "response_type": "embeddings_by_type"}.
std::string RenderCohereEmbed(const QuantizedEmbeddings& quantized, const CohereEmbedCall& call);

}  // namespace server::http
