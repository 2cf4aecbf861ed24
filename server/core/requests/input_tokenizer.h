// A model's inputs checked and tokenized: what every request kind's plan
// (server/core/requests/plans.h) does with its texts, pairs and token ids
// before anything is queued. Runs on the transports' threads, so the batcher
// receives token counts and never sees a bad input. Errors are
// INVALID_ARGUMENT and name the input's index and the reason (also as an
// InputError payload, server/core/api/input_error.h). One per served model,
// made at load: the tokenizer's special-token layouts are learnt then.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/api/request_limits.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/batch_request.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/token_layout.h"

namespace server::core {

class InputTokenizer {
 public:
  // What a request asks of each of its inputs: whether and where one longer
  // than the model's maximum is cut, and the prompt put before a text.
  struct InputOptions {
    bool truncate = false;
    engine::TruncationSide side = engine::TruncationSide::kRight;
    std::string_view prompt;
    engine::TruncationStrategy strategy = engine::TruncationStrategy::kLongestFirst;
    // A ColBERT model's text encoding (LoadedModel::colbert) for this kind.
    const ColbertEncoding* colbert = nullptr;
    core::InputType input_type = core::InputType::kDocument;
  };

  // `model` must outlive the tokenizer. Thread-safe once made.
  InputTokenizer(const LoadedModel* model, RequestLimits limits);

  const LoadedModel& model() const { return *model_; }
  // Options that cut a too-long input when `truncate` says so, else as
  // --auto-truncate says (RequestLimits::auto_truncate), at `side`.
  InputOptions CutOptions(std::optional<bool> truncate, engine::TruncationSide side) const {
    InputOptions options;
    options.truncate = truncate.value_or(limits_.auto_truncate);
    options.side = side;
    return options;
  }
  const RequestLimits& limits() const { return limits_; }

  // The inputs, checked and tokenized, as one batch request with `spec`
  // (inputs and spec set; the runner sets the rest).
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildInputs(const std::vector<core::Input>& inputs,
                                                            const InputOptions& options,
                                                            OutputSpec spec) const;
  absl::StatusOr<TokenizedInput> BuildInput(const core::Input& input,
                                            const InputOptions& options) const;
  absl::StatusOr<TokenizedInput> FromText(const std::string& text, const std::string& text_pair,
                                          bool is_pair, const InputOptions& options) const;
  absl::StatusOr<TokenizedInput> FromIds(const std::vector<int32_t>& ids,
                                         const std::vector<int32_t>& token_type_ids,
                                         const InputOptions& options) const;
  // A prompted reranker's (Qwen3-Reranker) input: prefix, the middle with
  // instruction, query and document filled in, suffix, each tokenized without
  // special tokens (prefix and suffix once, at load: LoadedModel); with
  // truncation the middle is cut at its end (the document's), never the
  // prompt or the query (checked by the rerank plan).
  absl::StatusOr<TokenizedInput> FromPromptedPair(const engine::PairPrompt& prompt,
                                                  std::string_view instruction,
                                                  const std::string& query,
                                                  const std::string& document,
                                                  const InputOptions& options) const;

  // INVALID_ARGUMENT for no inputs or more than max_inputs_per_request.
  absl::Status CheckInputCount(size_t count) const;
  // INVALID_ARGUMENT for an empty text, one over max_text_bytes or not UTF-8.
  absl::Status CheckText(const char* field, const std::string& text) const;
  // FAILED_PRECONDITION when the model has no usable tokenizer.
  absl::Status CheckTextInput() const;
  // INVALID_ARGUMENT naming the first token whose id the model's embedding
  // table lacks (a tokenizer may define more ids than config.json's
  // vocab_size: EmbeddingGemma's <image_soft_token>).
  absl::Status CheckIdsInTable(const std::vector<int32_t>& ids) const;
  // INVALID_ARGUMENT when `request`'s inputs would give more than
  // max_output_vectors vectors, each input `per_input_less` fewer than its tokens.
  absl::Status CheckOutputVectors(const BatchRequest& request, int per_input_less) const;
  // The overlap of windows of `window_tokens` (--window-overlap-tokens,
  // clamped to the window); unset: the window planner's default.
  std::optional<int> WindowOverlap(int window_tokens) const;

  // The tokenizer's special tokens around one text and around a pair
  // (token_layout.h), learnt at construction; the error when they could not
  // be (or the model has no tokenizer).
  absl::StatusOr<const Specials*> single_layout() const;
  absl::StatusOr<const PairLayout*> pair_layout() const;

 private:
  // A ColBERT model's text: its tokens cut to the kind's length less one,
  // the kind's prefix token after the first ([CLS]); a query padded with the
  // mask token to query_length, the padding hidden from attention unless the
  // model attends to it (PyLate's ColBERT.tokenize).
  absl::StatusOr<TokenizedInput> FromColbertText(const std::string& text,
                                                 const InputOptions& options) const;

  const LoadedModel* const model_;
  const RequestLimits limits_;
  absl::StatusOr<Specials> single_layout_;
  absl::StatusOr<PairLayout> pair_layout_;
};

// INVALID_ARGUMENT for a negative max_active_dims (sparse outputs).
absl::Status CheckMaxActiveDims(int max_active_dims);

// Appends values[begin, end) to `out`.
template <typename T>
void AppendRange(std::vector<T>* out, const std::vector<T>& values, size_t begin, size_t end) {
  out->insert(out->end(), values.begin() + static_cast<std::ptrdiff_t>(begin),
              values.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace server::core
