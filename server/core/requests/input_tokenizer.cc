#include "server/core/requests/input_tokenizer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "server/core/api/input_error.h"
#include "server/core/api/utf8.h"

namespace server::core {
namespace {

using core::Input;
using core::InputProblem;
using core::WithInputIndex;
using core::WithInputProblem;

// Cuts `values` to `max_length`, keeping the last one (the closing [SEP]).
// Token ids cut to max_length keep their first id ([CLS]) and last id
// ([SEP]); the ids between lose their end (right) or their start (left).
void CutIds(std::vector<int32_t>& values, int max_length, engine::TruncationSide side) {
  if (static_cast<int>(values.size()) <= max_length) return;
  if (side == engine::TruncationSide::kLeft) {
    values.erase(values.begin() + 1, values.end() - (max_length - 1));
    return;
  }
  const int32_t last = values.back();
  values.resize(max_length);
  values.back() = last;
}

absl::Status NoTokenizer() { return absl::FailedPreconditionError("the model has no tokenizer"); }

}  // namespace

InputTokenizer::InputTokenizer(const LoadedModel* model, RequestLimits limits)
    : model_(model), limits_(limits), single_layout_(NoTokenizer()), pair_layout_(NoTokenizer()) {
  if (model_->tokenizer == nullptr) return;
  single_layout_ = SpecialsOf(*model_->tokenizer);
  pair_layout_ = PairLayoutOf(*model_->tokenizer);
}

absl::StatusOr<const Specials*> InputTokenizer::single_layout() const {
  if (!single_layout_.ok()) return single_layout_.status();
  return &*single_layout_;
}

absl::StatusOr<const PairLayout*> InputTokenizer::pair_layout() const {
  if (!pair_layout_.ok()) return pair_layout_.status();
  return &*pair_layout_;
}

absl::Status CheckMaxActiveDims(int max_active_dims) {
  if (max_active_dims >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("max_active_dims is ", max_active_dims, "; it must be 0 (all) or more"));
}

absl::Status InputTokenizer::CheckOutputVectors(const BatchRequest& request,
                                                int per_input_less) const {
  int64_t vectors = 0;
  for (const TokenizedInput& input : request.inputs) {
    vectors += std::max<int64_t>(0, static_cast<int64_t>(input.ids.size()) - per_input_less);
  }
  if (vectors <= limits_.max_output_vectors) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the request would return ", vectors, " vectors (one per token), more than the limit of ",
      limits_.max_output_vectors, " (--max-output-vectors); send fewer or shorter inputs"));
}

absl::StatusOr<std::unique_ptr<BatchRequest>> InputTokenizer::BuildInputs(
    const std::vector<core::Input>& inputs, const InputOptions& options, OutputSpec spec) const {
  auto batch_request = std::make_unique<BatchRequest>();
  batch_request->spec = spec;
  batch_request->inputs.reserve(inputs.size());
  int64_t tokens = 0;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    absl::StatusOr<TokenizedInput> input = BuildInput(inputs[static_cast<size_t>(i)], options);
    if (!input.ok()) return WithInputIndex(i, input.status());
    tokens += static_cast<int64_t>(input->ids.size());
    if (tokens > limits_.max_tokens_per_request) {
      return WithInputIndex(
          i,
          absl::InvalidArgumentError(absl::StrCat(
              "the request reaches ", tokens, " tokens here, more than the limit of ",
              limits_.max_tokens_per_request, " tokens per request (--max-tokens-per-request)")));
    }
    // The engine's own check covers what the model knows best (token type
    // range, anything added later); the checks above give the precise messages.
    const engine::Sequence sequence{input->ids, input->token_type_ids};
    if (absl::Status valid = model_->encoder->Validate(sequence); !valid.ok()) {
      return WithInputIndex(i, valid);
    }
    batch_request->inputs.push_back(*std::move(input));
  }
  return batch_request;
}

absl::Status InputTokenizer::CheckInputCount(size_t count) const {
  if (count == 0) {
    return WithInputProblem(InputProblem::kEmpty,
                            absl::InvalidArgumentError("request has no inputs"));
  }
  if (static_cast<int>(count) > limits_.max_inputs_per_request) {
    return WithInputProblem(
        InputProblem::kInvalid,
        absl::InvalidArgumentError(absl::StrCat(
            "request has ", static_cast<int>(count), " inputs, more than the limit of ",
            limits_.max_inputs_per_request, " (--max-inputs-per-request)")));
  }
  return absl::OkStatus();
}

absl::StatusOr<TokenizedInput> InputTokenizer::BuildInput(const core::Input& input,
                                                          const InputOptions& options) const {
  switch (input.kind) {
    case Input::Kind::kText:
      if (options.colbert != nullptr) return FromColbertText(input.text, options);
      return FromText(input.text, std::string(), /*is_pair=*/false, options);
    case Input::Kind::kTextPair:
      if (options.colbert != nullptr) {
        return absl::InvalidArgumentError("a ColBERT model encodes single texts, not pairs");
      }
      return FromText(input.text, input.text_pair, /*is_pair=*/true, options);
    case Input::Kind::kTokenIds:
      if (!options.prompt.empty()) {
        return absl::InvalidArgumentError(
            "prompt_name and prompt apply to text inputs, not to token_ids");
      }
      return FromIds(input.ids, input.token_type_ids, options);
    case Input::Kind::kUnset:
      break;
  }
  return absl::InvalidArgumentError("no text, text_pair or token_ids set");
}

absl::Status InputTokenizer::CheckText(const char* field, const std::string& text) const {
  if (text.empty()) {
    return WithInputProblem(InputProblem::kEmpty,
                            absl::InvalidArgumentError(absl::StrCat(field, " is empty")));
  }
  if (static_cast<int64_t>(text.size()) > limits_.max_text_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is ", text.size(),
                                                   " bytes, more than the limit of ",
                                                   limits_.max_text_bytes, " (--max-text-bytes)"));
  }
  size_t bad_byte = 0;
  if (!IsValidUtf8(text, &bad_byte)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is not valid UTF-8 (at byte ", bad_byte, ")"));
  }
  return absl::OkStatus();
}

absl::Status InputTokenizer::CheckTextInput() const {
  if (model_->tokenizer != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "text input is unavailable for this model (send token_ids): ", model_->tokenizer_error));
}

absl::StatusOr<TokenizedInput> InputTokenizer::FromColbertText(const std::string& text,
                                                               const InputOptions& options) const {
  RETURN_IF_ERROR(CheckTextInput());
  RETURN_IF_ERROR(CheckText("text", text));
  const ColbertEncoding& colbert = *options.colbert;
  const bool query = options.input_type == core::InputType::kQuery;
  // PyLate always cuts to the kind's length: the model was trained so.
  const int length =
      std::min(query ? colbert.query_length : colbert.document_length, model_->max_length());
  const int specials = model_->tokenizer->num_special_tokens(/*pair=*/false);
  if (length - 1 <= specials) {
    return absl::FailedPreconditionError(absl::StrCat("the model's ", query ? "query" : "document",
                                                      " length ", length,
                                                      " leaves no room for a text token"));
  }
  absl::StatusOr<engine::Encoding> encoding =
      model_->tokenizer->Encode(text, length - 1, engine::TruncationSide::kRight);
  if (!encoding.ok()) return encoding.status();
  std::vector<int32_t>& ids = encoding->ids;
  ids.insert(ids.begin() + 1, query ? colbert.query_prefix_id : colbert.document_prefix_id);
  TokenizedInput input;
  if (query && colbert.expand_queries) {
    if (!colbert.attend_to_expansion) input.visible_keys = static_cast<int>(ids.size());
    ids.resize(static_cast<size_t>(length), colbert.mask_id);
    if (input.visible_keys == static_cast<int>(ids.size())) input.visible_keys = 0;
  }
  RETURN_IF_ERROR(CheckIdsInTable(ids));
  input.ids = std::move(ids);
  return input;
}

absl::StatusOr<TokenizedInput> InputTokenizer::FromText(const std::string& text,
                                                        const std::string& text_pair, bool is_pair,
                                                        const InputOptions& options) const {
  RETURN_IF_ERROR(CheckTextInput());
  RETURN_IF_ERROR(CheckText("text", text));
  if (is_pair) {
    RETURN_IF_ERROR(CheckText("text_pair", text_pair));
  }
  const int max_length = model_->max_length();
  // Without truncation, tokenize in full to report the real length.
  const int cut = options.truncate ? max_length : 0;
  // The prompt joins the (first) text before tokenization, as
  // sentence-transformers and text-embeddings-inference do.
  const std::string prompted =
      options.prompt.empty() ? std::string() : std::string(options.prompt) + text;
  const std::string& first = options.prompt.empty() ? text : prompted;
  absl::StatusOr<engine::Encoding> encoding =
      is_pair ? model_->tokenizer->EncodePair(first, text_pair, cut, options.side,
                                              /*add_special_tokens=*/true, options.strategy)
              : model_->tokenizer->Encode(first, cut, options.side);
  if (!encoding.ok()) return encoding.status();
  // The transports add how to truncate on their route (InputProblem::kTooLong).
  if (static_cast<int>(encoding->ids.size()) > max_length) {
    return WithInputProblem(InputProblem::kTooLong,
                            absl::InvalidArgumentError(absl::StrCat(
                                is_pair ? "text pair is " : "text is ", encoding->ids.size(),
                                " tokens long, more than the model's maximum of ", max_length)));
  }
  RETURN_IF_ERROR(CheckIdsInTable(encoding->ids));
  TokenizedInput input;
  input.ids = std::move(encoding->ids);
  // Models with one token type (RoBERTa family) take none, whatever the
  // tokenizer's pair template numbers the second text.
  if (is_pair && model_->encoder->config().token_types() > 1) {
    input.token_type_ids = std::move(encoding->token_type_ids);
  }
  return input;
}

absl::StatusOr<TokenizedInput> InputTokenizer::FromPromptedPair(const engine::PairPrompt& prompt,
                                                                std::string_view instruction,
                                                                const std::string& query,
                                                                const std::string& document,
                                                                const InputOptions& options) const {
  if (!document.empty()) {
    RETURN_IF_ERROR(CheckText("text", document));
  }
  const std::vector<int32_t>& prefix = model_->pair_prompt_prefix;
  const std::vector<int32_t>& suffix = model_->pair_prompt_suffix;
  // One pass over the template, so a query holding "{document}" stays text.
  const std::vector<std::pair<absl::string_view, absl::string_view>> fields = {
      {"{instruction}", absl::string_view(instruction.data(), instruction.size())},
      {"{query}", query},
      {"{document}", document}};
  const std::string middle = absl::StrReplaceAll(prompt.middle, fields);
  const int max_length = model_->max_length();
  const int budget = max_length - static_cast<int>(prefix.size() + suffix.size());
  absl::StatusOr<engine::Encoding> body =
      model_->tokenizer->Encode(middle, options.truncate ? std::max(budget, 1) : 0,
                                engine::TruncationSide::kRight, /*add_special_tokens=*/false);
  if (!body.ok()) return body.status();
  if (static_cast<int>(body->ids.size()) > budget) {
    return WithInputProblem(
        InputProblem::kTooLong,
        absl::InvalidArgumentError(
            absl::StrCat("the prompted pair is ", prefix.size() + body->ids.size() + suffix.size(),
                         " tokens long, more than the model's maximum of ", max_length)));
  }
  TokenizedInput input;
  input.ids.reserve(prefix.size() + body->ids.size() + suffix.size());
  input.ids.assign(prefix.begin(), prefix.end());
  input.ids.insert(input.ids.end(), body->ids.begin(), body->ids.end());
  input.ids.insert(input.ids.end(), suffix.begin(), suffix.end());
  RETURN_IF_ERROR(CheckIdsInTable(input.ids));
  return input;
}

absl::Status InputTokenizer::CheckIdsInTable(const std::vector<int32_t>& ids) const {
  const int rows = model_->encoder->config().vocab_size;
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p] < rows) continue;
    absl::StatusOr<std::string> token = model_->tokenizer->Decode({ids[p]}, false);
    return absl::InvalidArgumentError(
        absl::StrCat("token \"", token.ok() ? *token : "?", "\" (id ", ids[p], ") at position ", p,
                     " is outside the model's embedding table of ", rows,
                     " rows (config.json's vocab_size; the tokenizer defines more ids)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TokenizedInput> InputTokenizer::FromIds(const std::vector<int32_t>& ids,
                                                       const std::vector<int32_t>& types,
                                                       const InputOptions& options) const {
  const int ids_size = static_cast<int>(ids.size());
  const int types_size = static_cast<int>(types.size());
  if (ids.empty()) {
    return WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("token_ids is empty"));
  }
  const engine::ModelConfig& config = model_->encoder->config();
  for (int p = 0; p < ids_size; ++p) {
    const int32_t id = ids[static_cast<size_t>(p)];
    if (id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", id, " at position ", p, " is negative"));
    }
    if (id >= config.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("id ", id, " at position ", p,
                                                     " is outside the vocabulary (size ",
                                                     config.vocab_size, ")"));
    }
  }
  if (!types.empty()) {
    if (types_size != ids_size) {
      return absl::InvalidArgumentError(absl::StrCat(types_size, " token_type_ids for ", ids_size,
                                                     " ids (expected one per id, or none)"));
    }
    for (int p = 0; p < types_size; ++p) {
      const int32_t type = types[static_cast<size_t>(p)];
      if (type < 0 || type >= config.token_types()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "token type ", type, " at position ", p, " is outside 0..", config.token_types() - 1));
      }
    }
  }
  const int max_length = model_->max_length();
  if (ids_size > max_length && !options.truncate) {
    return WithInputProblem(
        InputProblem::kTooLong,
        absl::InvalidArgumentError(absl::StrCat(
            "token_ids has ", ids_size, " ids, more than the model's maximum of ", max_length)));
  }
  TokenizedInput input;
  input.ids = ids;
  input.token_type_ids = types;
  CutIds(input.ids, max_length, options.side);
  if (!input.token_type_ids.empty()) CutIds(input.token_type_ids, max_length, options.side);
  return input;
}

std::optional<int> InputTokenizer::WindowOverlap(int window_tokens) const {
  if (!limits_.window_overlap_tokens.has_value()) return std::nullopt;
  return std::clamp(*limits_.window_overlap_tokens, 0, std::max(0, window_tokens - 1));
}

}  // namespace server::core
