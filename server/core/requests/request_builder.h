// Turns API requests into the batcher's tokenized requests, checking every
// input on the way. Runs on the transports' threads, so the batcher receives token
// counts and never sees a bad input. Errors are INVALID_ARGUMENT and name
// the input's index and the reason (also as an InputError payload,
// server/core/api/input_error.h).
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
#include "server/core/requests/long_inputs.h"

namespace server {

class RequestBuilder {
 public:
  // `model` must outlive the builder.
  RequestBuilder(const LoadedModel* model, RequestLimits limits);

  // The returned request has inputs and spec; the caller sets deadline,
  // cancellation and `done`. Thread-safe.
  absl::StatusOr<std::unique_ptr<BatchRequest>> Build(const core::EncodeRequest& request) const;

  // Classify and sparse requests: one batch request with the head's spec.
  // FAILED_PRECONDITION when the model lacks the head (server/core/model/model_heads.h).
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildClassify(
      const core::ClassifyRequest& request) const;
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildSparse(
      const core::SparseRequest& request) const;
  // Several outputs of one pass; FAILED_PRECONDITION for an output the model
  // lacks, INVALID_ARGUMENT for none asked or more vectors than
  // max_output_vectors.
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildMulti(const core::MultiRequest& request) const;
  // Rerank: the (query, text) pairs, text i as input i, in parts of at most
  // `max_part_inputs` inputs and `max_part_tokens` tokens (in order).
  // `windows`, when not null, gets per text the pairs it runs as (window
  // mode; long_inputs.h), its outputs consecutive.
  absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> BuildRerank(
      const core::RerankRequest& request, int max_part_inputs, int64_t max_part_tokens,
      std::vector<int>* windows = nullptr) const;
  // Window mode (long_inputs.h; defined in long_input_builder.cc): whether
  // `request` runs in it, and its inputs, each too-long text or token_ids
  // as windows, with `plan` to pool their outputs.
  bool WindowsLongInputs(const core::EncodeRequest& request) const;
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildWindowed(const core::EncodeRequest& request,
                                                              long_inputs::WindowPlan* plan) const;

  const LoadedModel& model() const { return *model_; }
  const RequestLimits& limits() const { return limits_; }

  absl::StatusOr<engine::Encoding> Tokenize(const core::TokenizeRequest& request) const;
  // Ids back to text (INVALID_ARGUMENT names an id outside the vocabulary).
  absl::StatusOr<std::string> Decode(const core::DecodeRequest& request) const;

 private:
  absl::StatusOr<OutputSpec> BuildSpec(const core::EncodeRequest& request) const;
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
  // The inputs, checked and tokenized, as one request with `spec`.
  absl::StatusOr<std::unique_ptr<BatchRequest>> BuildInputs(const std::vector<core::Input>& inputs,
                                                            InputOptions options,
                                                            OutputSpec spec) const;
  // The prompt a request's text inputs get: request.prompt, the text of
  // request.prompt_name, or of the model's default_prompt_name (not for a
  // request with token_ids); INVALID_ARGUMENT for a name the model lacks or
  // both prompt and prompt_name.
  absl::StatusOr<std::string_view> ResolvePrompt(const core::EncodeRequest& request) const;
  // Leading tokens to leave out of pooling for `prompt` (the model's Pooling
  // says include_prompt false), else 0.
  absl::StatusOr<int> PromptTokens(const core::EncodeRequest& request,
                                   std::string_view prompt) const;
  // The text of `prompt_name`; INVALID_ARGUMENT for a name the model lacks.
  absl::StatusOr<std::string_view> FindPrompt(const std::string& prompt_name) const;
  absl::StatusOr<TokenizedInput> BuildInput(const core::Input& input, InputOptions options) const;
  absl::StatusOr<TokenizedInput> FromText(const std::string& text, const std::string& text_pair,
                                          bool is_pair, InputOptions options) const;
  // A prompted reranker's (Qwen3-Reranker) input: prefix, the middle with
  // instruction, query and document filled in, suffix, each tokenized without
  // special tokens (prefix and suffix once, at load: LoadedModel); with
  // truncation the middle is cut at its end (the document's), never the
  // prompt or the query (checked by BuildRerank).
  absl::StatusOr<TokenizedInput> FromPromptedPair(const engine::PairPrompt& prompt,
                                                  std::string_view instruction,
                                                  const std::string& query,
                                                  const std::string& document,
                                                  InputOptions options) const;
  // INVALID_ARGUMENT naming the first token whose id the model's embedding
  // table lacks (a tokenizer may define more ids than config.json's
  // vocab_size: EmbeddingGemma's <image_soft_token>).
  absl::Status CheckIdsInTable(const std::vector<int32_t>& ids) const;
  // A ColBERT model's text: its tokens cut to the kind's length less one,
  // the kind's prefix token after the first ([CLS]); a query padded with the
  // mask token to query_length, the padding hidden from attention unless the
  // model attends to it (PyLate's ColBERT.tokenize).
  absl::StatusOr<TokenizedInput> FromColbertText(const std::string& text,
                                                 InputOptions options) const;
  // The checks every rerank request gets: a query, texts within
  // max_rerank_texts, top_n.
  absl::Status CheckRerankRequest(const core::RerankRequest& request) const;
  // MaxSim rerank: the query (as a query) then the texts (as documents).
  absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> BuildMaxSimRerank(
      const core::RerankRequest& request, int max_part_inputs, int64_t max_part_tokens) const;
  // Window mode's inputs (long_input_builder.cc), `weights` one per window.
  absl::StatusOr<std::vector<TokenizedInput>> TextWindows(const std::string& text,
                                                          std::string_view prompt,
                                                          std::vector<int>* weights) const;
  absl::StatusOr<std::vector<TokenizedInput>> IdWindows(const std::vector<int32_t>& ids,
                                                        const std::vector<int32_t>& types,
                                                        std::vector<int>* weights) const;
  absl::StatusOr<std::vector<TokenizedInput>> PairWindows(const std::string& query,
                                                          const std::string& text) const;
  std::optional<int> WindowOverlap(int window_tokens) const;
  absl::StatusOr<TokenizedInput> FromIds(const std::vector<int32_t>& ids,
                                         const std::vector<int32_t>& token_type_ids,
                                         InputOptions options) const;
  // INVALID_ARGUMENT when `request`'s inputs would give more than
  // max_output_vectors vectors, each input `per_input_less` fewer than its tokens.
  absl::Status CheckOutputVectors(const BatchRequest& request, int per_input_less) const;
  // INVALID_ARGUMENT for no inputs or more than max_inputs_per_request.
  absl::Status CheckInputCount(size_t count) const;
  absl::Status CheckText(const char* field, const std::string& text) const;
  // FAILED_PRECONDITION when the model has no usable tokenizer.
  absl::Status CheckTextInput() const;

  const LoadedModel* const model_;
  const RequestLimits limits_;
};

}  // namespace server
