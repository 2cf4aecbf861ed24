// JSON <-> the core's late chunking types for POST /embed_chunks (TEI style).
// Pure functions of the body, like json_mapping.h.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/core/requests/late_chunking.h"

namespace server::http {

struct ChunksCall {
  core::ChunksRequest request;
  std::string model;    // "model", empty when absent
  bool base64 = false;  // "encoding_format": "base64": little-endian float32, base64
};

// {"inputs": string, "chunks": [[start, end], ...] | "chunk_tokens": int,
//  "window_overlap": int, "normalize": bool, "dimensions": int,
//  "encoding_format": "float" | "base64", "model": string}. Whether exactly
// one of chunks and chunk_tokens is there, and the spans' values, are the
// core's to check (its errors name the chunk); here only the types, naming
// the field ("chunks[2]").
absl::StatusOr<ChunksCall> ParseTeiEmbedChunks(std::string_view body);

// {"chunks": [{"start", "end", "tokens", "embedding"}, ...], "windows": n,
//  "tokens": n}; each embedding a list of floats, or with base64 a string.
std::string RenderTeiEmbedChunks(const core::ChunksResult& result, const ChunksCall& call);

}  // namespace server::http
