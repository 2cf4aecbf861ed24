// Long inputs served as windows ("window mode"), the third choice beside
// cutting an input longer than the model's maximum and refusing it.
//
// The choice, per request: long_input when set, else the request's truncate
// (true: cut, false: refuse), else the server's --long-inputs, else its
// --auto-truncate (cut or refuse). Embeddings (Encode, /v1/embeddings,
// /embed) and cross-encoder rerank window; classify, sparse, EncodeMulti,
// MaxSim (ColBERT) and prompted (Qwen3) rerankers do not (they cut or refuse
// as before).
//
// Windows: the input's T text tokens (no special tokens) are planned as late
// chunking plans them (chunking::PlanWindows): windows of at most W text
// tokens, window k starting at k * (W - O), the last ending at the text's
// last token; O = --window-overlap-tokens (default W / 4, rounded down; at
// most W - 1). Each window is [specials before] [window tokens] [specials
// after], as the tokenizer's post-processor wraps one text. An input that
// fits runs as itself (one window). A text input's prompt (prompt_name,
// prompt, the model's default) is tokenized on its own and put before every
// window's tokens (W shrinks by its tokens). token_ids keep their first and
// last id on every window (as truncation keeps them). A text pair is not
// windowed: a too-long pair is refused.
//
// Embedding of a windowed input (the precise definition):
//   v_k  = window k's vector as the request's pipeline computes it (the
//          model's Pooling modes, its Dense layers), NOT normalized and not
//          cut to `dimensions`;
//   w_k  = the text tokens window k owns: late chunking's stitching rule,
//          each text token owned by exactly one window (of the O tokens two
//          windows share, the first ceil(O/2) by the earlier one), so
//          sum_k w_k = T and overlapping tokens are not counted twice;
//   v    = sum_k w_k v_k / sum_k w_k (accumulated in double);
//   then Matryoshka `dimensions` (the first values), then L2 normalization
//   when the request (or the model's Normalize module) asks it: the same
//   order as one input's. An input of one window gets exactly its own vector.
// Why owned tokens, not each window's length: with lengths, the O tokens
// two windows share would count twice (the text's seams would weigh more
// than its other parts); with owned tokens every text token counts once, so
// with mean pooling v is close to the mean over the text's tokens (each
// taken from one window), and a short last window weighs by what it adds.
// Why unnormalized: a window's magnitude is part of what it says (as in one
// long pass's mean); the model's Normalize then applies once, to the result.
//
// Rerank (a cross-encoder with one label, pairs from the tokenizer's pair
// template): a (query, text) pair longer than the model's maximum runs as
// (query, window) pairs, W = max length - the pair's special tokens - the
// query's tokens (a query leaving no room is refused as with truncation);
// the text's score is the maximum over its windows of the raw logit, then
// the model's activation (sigmoid, identity: monotonic, so the same window
// wins as with max of the activated scores); raw_scores: the max raw logit.
//
// Admission: every window is one input of the request: windows count
// against --max-inputs-per-request and --max-tokens-per-request (Encode), or
// --max-rerank-texts (rerank: pairs), and take their place in the queue and
// the batches like any input; an overrun is INVALID_ARGUMENT naming the input.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/heads.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/backend.h"

namespace server::core::long_inputs {

// The choice for a request (above): `asked` (long_input), else `truncate`,
// else `server_default`, else auto_truncate's.
core::LongInput Resolve(std::optional<core::LongInput> asked, std::optional<bool> truncate,
                        std::optional<core::LongInput> server_default, bool auto_truncate);

// Where one input's windows are among a request's outputs, and their weights.
struct WindowedInput {
  size_t first = 0;          // index of its first window's output
  std::vector<int> weights;  // one per window (its owned text tokens)
};

struct WindowPlan {
  std::vector<WindowedInput> inputs;  // in input order
  int dimensions = 0;                 // 0: all
  bool normalize = false;
};

// One pooled output per input (rows 1, tokens: its windows' tokens), as the
// definition above says; `windows` gets each input's window count.
// INTERNAL when outputs do not match the plan.
absl::StatusOr<std::vector<InputOutput>> PoolWindows(const WindowPlan& plan,
                                                     std::vector<InputOutput> outputs,
                                                     std::vector<int>* windows);

// Rerank: one output per text, the one of its `windows[i]` consecutive
// outputs with the greatest first value (raw logit; ties: the earlier
// window), tokens summed over them. INTERNAL on a count mismatch.
absl::StatusOr<std::vector<InputOutput>> BestWindows(const std::vector<int>& windows,
                                                     std::vector<InputOutput> outputs);

// BestWindows, then the ranking as ToRerankResult (server/core/requests/head_results.h)
// gives it, each hit with its text's window count.
absl::StatusOr<core::RerankResult> RankBestWindows(const std::vector<int>& windows,
                                                   std::vector<InputOutput> outputs,
                                                   const core::RerankRequest& request,
                                                   engine::ScoreActivation activation);

}  // namespace server::core::long_inputs
