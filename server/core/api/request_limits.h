// What one request may carry and how its long inputs are treated: the
// server's per-request bounds (--max-inputs-per-request, --max-text-bytes,
// --max-tokens-per-request, --max-rerank-texts, --max-output-vectors) and
// its defaults for truncation and window mode. Each default is written here
// once; the server's configuration embeds this struct.
#pragma once

#include <cstdint>
#include <optional>

#include "server/core/api/service_types.h"

namespace server::core {

struct RequestLimits {
  int max_inputs_per_request = 64;
  int64_t max_text_bytes = 65536;  // per text; a pair's two texts count separately
  // Tokens after tokenization (and truncation) over all of one request's
  // inputs; the input that passes it is named in the error.
  int64_t max_tokens_per_request = 16384;
  // Whether an input longer than the model's maximum is cut (at the
  // request's truncation_direction) when the request does not say "truncate"
  // (--auto-truncate); else it is refused. On by default, as in
  // text-embeddings-inference since 2026: docs/configuration.md says why.
  bool auto_truncate = true;
  // Embeddings and rerank (--long-inputs): a too-long input is cut, run as
  // windows, or refused when the request says neither long_input nor
  // truncate; unset: as auto_truncate says (kTruncate or kError).
  std::optional<core::LongInput> long_inputs;
  // Tokens two consecutive windows share (--window-overlap-tokens); unset: a
  // quarter of a window's text tokens; at most a window's tokens less one.
  std::optional<int> window_overlap_tokens;
  // Texts in one rerank request (--max-rerank-texts). A rerank request is
  // split into parts of at most max_inputs_per_request pairs (and one batch,
  // and max_tokens_per_request tokens), so it is not bound by those.
  int max_rerank_texts = 1000;
  // Vectors one request may return: token states (pooling NONE) and
  // multi-vector (ColBERT) outputs over all its inputs (--max-output-vectors).
  int64_t max_output_vectors = 8192;
};

}  // namespace server::core
