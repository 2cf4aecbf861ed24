// JSON <-> core types for the head routes: TEI's /rerank, /predict,
// /embed_sparse, /embed_all and /similarity, and the Cohere/Jina rerank shape
// of /v1/rerank. Field errors carry the OpenAI detail (http_errors.h) and
// name the field ("texts[2]").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/api/service_types.h"
#include "server/http/json_mapping.h"

namespace server::http {

// TEI: {"query", "texts", "truncate", "raw_scores", "return_text"}.
absl::StatusOr<core::RerankRequest> ParseTeiRerank(std::string_view body, std::string* model);
// [{"index", "score", "text"?}] by descending score.
std::string RenderTeiRerank(const core::RerankResult& result);

// Cohere v2 / Jina: {"model", "query", "documents": [string | {"text"}],
// "top_n", "return_documents"}. `model` gets the name the client sent.
absl::StatusOr<core::RerankRequest> ParseCohereRerank(std::string_view body, std::string* model);
// {"id", "model", "results": [{"index", "relevance_score", "document"?:
// {"text"}}], "meta": {...}, "usage": {"total_tokens"}}.
std::string RenderCohereRerank(const core::RerankResult& result, const std::string& model,
                               int64_t documents);

// TEI: "inputs" one text, a pair [a, b], or a batch of [a] / [a, b];
// `batched`: the answer is a list per input.
absl::StatusOr<core::ClassifyRequest> ParseTeiPredict(std::string_view body, bool* batched,
                                                      std::string* model);
// [{"label", "score"}] by descending score (a list of those when batched).
std::string RenderTeiPredict(const core::ClassifyResult& result, bool batched);

// TEI /embed_sparse: /embed's inputs and truncation.
absl::StatusOr<core::SparseRequest> ParseTeiEmbedSparse(std::string_view body, int hidden_size,
                                                        std::string* model);
// [[{"index", "value"}]].
std::string RenderTeiEmbedSparse(const core::SparseResult& result);

// TEI /embed_all: /embed's inputs and truncation, every token's state.
absl::StatusOr<core::EncodeRequest> ParseTeiEmbedAll(std::string_view body, int hidden_size,
                                                     std::string* model);
// [[[float]]]: per input, per token.
std::string RenderTeiEmbedAll(const core::EncodeResult& result);

// TEI /similarity: {"inputs": {"source_sentence", "sentences"}, "parameters"?:
// {"truncate", "truncation_direction", "prompt_name"}}: one encode request,
// the source first, normalized.
absl::StatusOr<core::EncodeRequest> ParseTeiSimilarity(std::string_view body, std::string* model);
// [cosine(source, sentence_i)].
std::string RenderTeiSimilarity(const core::EncodeResult& result);

}  // namespace server::http
