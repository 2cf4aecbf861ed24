// Late chunking (Jina AI, 2024): a long text is encoded once, as a whole,
// and its token states are pooled per chunk, so that every chunk's vector
// has seen the whole document (within the model's context).
//
// The text is tokenized once, without special tokens, with offsets. When its
// tokens and the model's special tokens (as the tokenizer's post-processor
// adds them to one text: [CLS] ... [SEP], <s> ... </s>) fit the model's
// maximum length, it is one sequence. Beyond that it runs as overlapping
// windows: each holds at most W = max_length - specials of the text's tokens,
// wrapped in the specials; window k starts at token k * (W - O), where O is
// the overlap (window_overlap; default W / 4, rounded down; 0 <= O < W), and
// the last one ends at the text's last token. Every window is an input of
// one batch request (pooling NONE: all token states), so it shares the queue,
// the batches, the admission control and the deadlines of every other
// request.
//
// Stitching: each of the text's tokens takes its state from exactly one
// window, the one in which it is farthest from the edge where two windows
// meet. Of the O tokens two consecutive windows share, the first ceil(O / 2)
// take the earlier window's states and the other floor(O / 2) the later
// window's (a tie, the middle token of an odd overlap, goes to the earlier
// window). Special tokens' states are never used.
//
// A chunk is either an explicit span [start, end) of the text in Unicode code
// points (as Python's str indexing counts them), or, with chunk_tokens N,
// consecutive runs of N of the text's tokens (the last one shorter), whose
// span runs from the first token's start to the last token's end. A token
// belongs to the explicit chunk that holds its first character. Each chunk's
// vector is the mean of its tokens' states, then the model's
// sentence-transformers Dense layers (when it has them), Matryoshka
// `dimensions`, then L2 normalization when asked (unset: when the model's
// pipeline has a Normalize module): engine::Embed with mean pooling.
// Prompts are not applied (a prompt would shift every offset).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/sentence_pipeline.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/batch_request.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/input_tokenizer.h"

namespace server::core {
namespace chunking {

// [begin, end) of the text's tokens (no special tokens).
struct TokenRange {
  int begin = 0;
  int end = 0;
  int size() const { return end - begin; }
};

struct Window {
  TokenRange tokens;  // the text's tokens the window holds
  TokenRange owned;   // those that take their state from it (stitching, above)
};

// The windows for `text_tokens` tokens, at most `window_tokens` each, with
// `overlap` (unset: window_tokens / 4). INVALID_ARGUMENT for an overlap
// outside 0..window_tokens-1, or window_tokens < 1.
absl::StatusOr<std::vector<Window>> PlanWindows(int text_tokens, int window_tokens,
                                                std::optional<int> overlap);

// Unicode code points in `text` (valid UTF-8).
int CodePointLength(std::string_view text);

// The tokens' byte offsets into `text` as code point spans: a start inside a
// character is that character's, an end inside one is after it.
std::vector<core::ChunkSpan> CodePointSpans(std::string_view text,
                                            const std::vector<std::pair<int, int>>& byte_offsets);

// The tokens of each explicit chunk: a token is in the chunk that holds its
// start. INVALID_ARGUMENT naming the chunk ("chunks[2]: ...") for a span that
// is empty, reversed, outside the text (`text_length` code points), not after
// the previous chunk, or that holds no token.
absl::StatusOr<std::vector<TokenRange>> TokensOfSpans(
    const std::vector<core::ChunkSpan>& chunks, const std::vector<core::ChunkSpan>& token_spans,
    int text_length);

// Consecutive runs of `chunk_tokens` of `token_count` tokens, the last shorter.
std::vector<TokenRange> SplitTokens(int token_count, int chunk_tokens);

// The text's `text_tokens` token states (text_tokens x hidden), each from
// its owning window: outputs[k] holds window k's states (all rows, special
// tokens included; `leading_specials` of them before the text's tokens).
// INTERNAL when an output's shape is not the window's.
absl::StatusOr<std::vector<float>> StitchStates(const std::vector<Window>& windows,
                                                const std::vector<InputOutput>& outputs,
                                                int leading_specials, int hidden, int text_tokens);

// Everything a request needs after its windows ran.
struct ChunkPlan {
  std::vector<Window> windows;
  std::vector<core::ChunkSpan> spans;  // per chunk, in code points
  std::vector<TokenRange> chunks;      // per chunk, its tokens
  int text_tokens = 0;
  int leading_specials = 0;
  engine::EmbeddingOptions options;  // mean, Dense, dimensions, normalize
};

// Checks and tokenizes `request` for the tokenizer's model and makes its windows as
// inputs (`inputs`, one per window). INVALID_ARGUMENT names the field or the
// chunk; FAILED_PRECONDITION for a model without a tokenizer, or whose Dense
// layers do not take a mean-pooled vector.
absl::StatusOr<ChunkPlan> PlanChunks(const InputTokenizer& input_tokenizer,
                                     const core::ChunksRequest& request,
                                     std::vector<TokenizedInput>* inputs);

// The chunks' vectors from the windows' token states (`outputs`, one per
// window, pooling NONE). Thread-safe (const on the model).
absl::StatusOr<core::ChunksResult> PoolChunks(const LoadedModel& model, const ChunkPlan& plan,
                                              const std::vector<InputOutput>& outputs);

}  // namespace chunking
}  // namespace server::core
