// JSON <-> core types for POST /embed_multi: several outputs of one pass
// over each input (BAAI/bge-m3's dense, sparse and ColBERT outputs).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/core/api/service_types.h"

namespace server::http {

struct MultiCall {
  core::MultiRequest request;
  bool base64 = false;  // "encoding_format": "base64": vectors as little-endian float32, base64
  std::string model;    // as the client named it
};

// {"inputs": string | string[] | int[] | int[][] (as /embed), "outputs":
// ["dense", "sparse", "colbert"] (any non-empty subset; default all three),
// "input_type": "document" (default) | "query" (a ColBERT model's encoding),
// "max_active_dims": int, "return_tokens": bool, "truncate",
// "truncation_direction", "encoding_format": "float" | "base64", "model"}.
absl::StatusOr<MultiCall> ParseEmbedMulti(std::string_view body);

// {"model", "data": [{"index", "tokens", "dense"?: [float] | base64,
// "sparse"?: [{"index", "value", "token"?}], "colbert"?: [[float]] | base64
// (rows x cols float32, row-major), "colbert_shape"?: [rows, cols]}],
// "usage": {"prompt_tokens", "total_tokens"}}.
std::string RenderEmbedMulti(const core::MultiResult& result, const MultiCall& call,
                             const std::string& served_model);

}  // namespace server::http
