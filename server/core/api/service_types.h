// The service's requests and results in plain C++ types. Every transport
// (gRPC, HTTP) converts its wire format to these and back; nothing below
// the adapters knows protobuf, gRPC or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/batching/backend.h"

namespace server::core {

// One input: a text, a text pair, or token ids (with optional types).
struct Input {
  enum class Kind { kUnset, kText, kTextPair, kTokenIds };
  Kind kind = Kind::kUnset;
  std::string text;                     // kText, kTextPair
  std::string text_pair;                // kTextPair
  std::vector<int32_t> ids;             // kTokenIds
  std::vector<int32_t> token_type_ids;  // kTokenIds; empty: all zero

  static Input Text(std::string text) {
    Input input;
    input.kind = Kind::kText;
    input.text = std::move(text);
    return input;
  }
  static Input Ids(std::vector<int32_t> ids) {
    Input input;
    input.kind = Kind::kTokenIds;
    input.ids = std::move(ids);
    return input;
  }
};

// What to do with an input longer than the model's maximum: cut it, run it
// as overlapping windows and pool them (server/core/requests/long_inputs.h), or
// refuse it. Unset on a request: its `truncate`, else the server's
// --long-inputs (RequestLimits::long_inputs).
enum class LongInput { kTruncate, kWindow, kError };

// Which pooling a request asks for; kModelDefault: the model's own.
// kModelDefault: the model's sentence-transformers pipeline (all its
// Pooling modes, then its Dense layers); any other choice is that one
// pooling alone, without Dense.
enum class PoolingChoice {
  kModelDefault,
  kCls,
  kMean,
  kNone,
  kPooler,
  kMax,
  kMeanSqrtLen,
  kWeightedMean,
  kLastToken
};

struct EncodeRequest {
  std::vector<Input> inputs;
  PoolingChoice pooling = PoolingChoice::kModelDefault;
  // L2-normalize; unset: as the model's pipeline says (a Normalize module)
  // for pooled vectors, no for token states.
  std::optional<bool> normalize;
  // Matryoshka: keep the first this many values of each vector (before
  // normalizing); 0: all. 1..the embedding's size.
  int dimensions = 0;
  // Cut inputs longer than the model's maximum (else they are refused);
  // unset: as the server's --auto-truncate says (RequestLimits::auto_truncate).
  std::optional<bool> truncate;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
  // Wins over `truncate` when set (server/core/requests/long_inputs.h).
  std::optional<LongInput> long_input;
  // One of the model's prompts (config_sentence_transformers.json), put
  // before every text input; empty: `prompt`, else the model's
  // default_prompt_name, else none.
  std::string prompt_name;
  // A literal prompt put before every text input (not with prompt_name).
  std::string prompt;
};

// One output per input, in input order, with the pooling that was applied.
struct EncodeResult {
  engine::Pooling pooling = engine::Pooling::kCls;
  std::vector<InputOutput> outputs;
  // Window mode only (else empty): per input, the windows it ran as (1: it fit).
  std::vector<int> windows;
};

struct DecodeRequest {
  std::vector<int32_t> ids;
  bool skip_special_tokens = true;
};

struct TokenizeRequest {
  std::string text;
  std::string text_pair;  // empty: a single text
  bool truncate = false;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
  bool add_special_tokens = true;  // false: the text's tokens alone, no [CLS]/[SEP]
};

// Classification (sequence-classification heads, cross-encoders): one text
// or one text pair per input.
struct ClassifyRequest {
  std::vector<Input> inputs;  // kText or kTextPair
  bool raw_scores = false;    // the logits as they are, no activation
  std::optional<bool> truncate;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
};

struct LabelScore {
  int id = 0;  // the label's index in the model's id2label
  std::string label;
  float score = 0.0f;
};

// Per input, in input order: every label, by descending score.
struct ClassifyResult {
  std::vector<std::vector<LabelScore>> predictions;
  int64_t tokens = 0;
};

// Reranking with a cross-encoder (a classifier with one label): each text is
// scored as the pair (query, text); a pair longer than the model's maximum
// loses tokens from the text, never from the query (only_second).
struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;
  std::optional<int> top_n;  // unset: every text; 0 or less is INVALID_ARGUMENT
  bool return_text = false;
  bool raw_scores = false;
  std::optional<bool> truncate;
  // Wins over `truncate` when set: kWindow scores a too-long text by its
  // best window (server/core/requests/long_inputs.h).
  std::optional<LongInput> long_input;
  // Which end of the text truncation cuts (the query is never cut).
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
  // A prompted reranker's task instruction (engine::PairPrompt); empty: the
  // model's default. Refused by other rerankers.
  std::string instruction;
};

struct RerankHit {
  int index = 0;  // into RerankRequest::texts
  float score = 0.0f;
  std::string text;  // when return_text
  int windows = 0;   // window mode: the (query, window) pairs scored (1: it fit); else 0
};

// By descending score (ties: lower index first), at most top_n.
struct RerankResult {
  std::vector<RerankHit> results;
  int64_t tokens = 0;
};

// SPLADE sparse embeddings (a checkpoint with its masked-LM head).
struct SparseRequest {
  std::vector<Input> inputs;   // kText, kTextPair or kTokenIds
  int max_active_dims = 0;     // 0: every weight above zero; negative is INVALID_ARGUMENT
  bool return_tokens = false;  // the vocabulary's token for each id
  std::optional<bool> truncate;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
};

struct SparseValue {
  int32_t id = 0;
  float weight = 0.0f;
  std::string token;  // when return_tokens
};

// Per input, in input order: by descending weight.
struct SparseResult {
  std::vector<std::vector<SparseValue>> outputs;
  int64_t tokens = 0;
};

// Several outputs of the model from one pass over each input (BAAI/bge-m3:
// the dense embedding, sparse lexical weights and ColBERT vectors).
// How a ColBERT model encodes a text (its query or document prefix, length,
// expansion); other models encode both alike.
enum class InputType { kDocument, kQuery };

struct MultiRequest {
  std::vector<Input> inputs;  // kText, kTextPair or kTokenIds
  InputType input_type = InputType::kDocument;
  bool dense = false;       // the model's embedding, as EncodeRequest's default gives it
  bool sparse = false;      // as SparseRequest gives them
  bool colbert = false;     // one normalized vector per token (the model's multi-vector head)
  int max_active_dims = 0;  // sparse: 0 keeps every weight above zero
  bool return_tokens = false;
  std::optional<bool> truncate;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
};

struct MultiOutput {
  std::vector<float> dense;         // when asked
  std::vector<SparseValue> sparse;  // when asked: by descending weight
  int colbert_rows = 0;             // when asked: rows x cols floats, row-major
  int colbert_cols = 0;
  std::vector<float> colbert;
  int tokens = 0;
};

// Per input, in input order.
struct MultiResult {
  std::vector<MultiOutput> outputs;
  int64_t tokens = 0;
};

// Late chunking (server/core/requests/late_chunking.h): one long text
// encoded once, its token states pooled per chunk.
// [start, end) in code points of the text.
struct ChunkSpan {
  int start = 0;
  int end = 0;
};

struct ChunksRequest {
  std::string text;
  // Exactly one of: explicit spans (sorted, non-overlapping, non-empty,
  // within the text), or chunk_tokens > 0.
  std::vector<ChunkSpan> chunks;
  int chunk_tokens = 0;
  // Tokens two consecutive windows share; unset: a quarter of a window's
  // text tokens (rounded down).
  std::optional<int> window_overlap;
  // L2-normalize each chunk's vector; unset: as the model's pipeline says.
  std::optional<bool> normalize;
  // Matryoshka: keep the first this many values (before normalizing); 0: all.
  int dimensions = 0;
};

struct ChunkEmbedding {
  int start = 0;  // code points
  int end = 0;
  int tokens = 0;  // the text's tokens pooled into it
  std::vector<float> values;
};

struct ChunksResult {
  std::vector<ChunkEmbedding> chunks;  // in the request's order
  int windows = 0;                     // sequences the engine ran
  int64_t tokens = 0;                  // the text's tokens (no special tokens)
};

// Which transport a call came in on (a metrics label).
enum class Transport { kGrpc, kHttp };
inline constexpr int kTransportCount = 2;
inline const char* TransportName(Transport transport) {
  return transport == Transport::kGrpc ? "grpc" : "http";
}

}  // namespace server::core
