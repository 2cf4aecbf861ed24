#include "server/core/requests/request_builder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "server/core/api/input_error.h"
#include "server/core/api/utf8.h"
#include "server/core/model/model_heads.h"

namespace server {
namespace {

// INVALID_ARGUMENT for a negative max_active_dims (sparse outputs).
absl::Status CheckMaxActiveDims(int max_active_dims) {
  if (max_active_dims >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("max_active_dims is ", max_active_dims, "; it must be 0 (all) or more"));
}

// Appends `input` to the last of `parts`, or to a new part of `spec` when
// there is none from index `first_open` on, or the last would pass
// `max_inputs` inputs or `max_tokens` tokens (`part_tokens`: the last's).
void AddToParts(TokenizedInput input, const OutputSpec& spec, size_t first_open, int max_inputs,
                int64_t max_tokens, int64_t* part_tokens,
                std::vector<std::unique_ptr<BatchRequest>>* parts) {
  const auto tokens = static_cast<int64_t>(input.ids.size());
  if (parts->size() <= first_open || static_cast<int>(parts->back()->inputs.size()) >= max_inputs ||
      *part_tokens + tokens > max_tokens) {
    parts->push_back(std::make_unique<BatchRequest>());
    parts->back()->spec = spec;
    *part_tokens = 0;
  }
  *part_tokens += tokens;
  parts->back()->inputs.push_back(std::move(input));
}

using core::EncodeRequest;
using core::Input;
using core::InputProblem;
using core::PoolingChoice;
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

}  // namespace

RequestBuilder::RequestBuilder(const LoadedModel* model, RequestLimits limits)
    : model_(model), limits_(limits) {}

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::Build(
    const EncodeRequest& request) const {
  if (absl::Status status = CheckInputCount(request.inputs.size()); !status.ok()) return status;
  absl::StatusOr<OutputSpec> spec = BuildSpec(request);
  if (!spec.ok()) return spec.status();

  absl::StatusOr<std::string_view> prompt = ResolvePrompt(request);
  if (!prompt.ok()) return prompt.status();
  // Window mode runs through BuildWindowed (long_inputs.h); here it refuses.
  const InputOptions options{
      long_inputs::Resolve(request.long_input, request.truncate, limits_.long_inputs,
                           limits_.auto_truncate) == core::LongInput::kTruncate,
      request.truncation_side, *prompt};
  absl::StatusOr<int> prompt_tokens = PromptTokens(request, *prompt);
  if (!prompt_tokens.ok()) return prompt_tokens.status();
  spec->prompt_tokens = *prompt_tokens;

  absl::StatusOr<std::unique_ptr<BatchRequest>> built = BuildInputs(request.inputs, options, *spec);
  if (built.ok() && spec->pooling == engine::Pooling::kNone) {
    if (absl::Status status = CheckOutputVectors(**built, 0); !status.ok()) return status;
  }
  return built;
}

absl::Status RequestBuilder::CheckOutputVectors(const BatchRequest& request,
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

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::BuildMulti(
    const core::MultiRequest& request) const {
  if (!request.dense && !request.sparse && !request.colbert) {
    return absl::InvalidArgumentError(
        "outputs is empty: ask for one or more of dense, sparse and colbert");
  }
  for (const auto& [wanted, head] : {std::pair{request.dense, HeadRequest::kEmbedding},
                                     std::pair{request.sparse, HeadRequest::kSparse},
                                     std::pair{request.colbert, HeadRequest::kMultiVector}}) {
    if (!wanted) continue;
    if (absl::Status status = CheckHead(model_->heads, head); !status.ok()) return status;
  }
  if (absl::Status status = CheckInputCount(request.inputs.size()); !status.ok()) return status;
  if (absl::Status status = CheckMaxActiveDims(request.max_active_dims); !status.ok()) {
    return status;
  }
  OutputSpec spec;
  spec.head = OutputHead::kMulti;
  spec.multi = {request.dense, request.sparse, request.colbert, nullptr};
  // The dense output is the model's embedding as its pipeline defines it.
  spec.pooling = model_->default_pooling;
  spec.model_pooling = true;
  spec.apply_dense = true;
  spec.normalize = model_->pipeline.normalize;
  spec.sparse = model_->heads.sparse_options;
  spec.sparse.max_active_dims = request.max_active_dims;
  InputOptions options;
  options.truncate = request.truncate.value_or(limits_.auto_truncate);
  options.side = request.truncation_side;
  if (model_->colbert.has_value()) {
    options.colbert = &*model_->colbert;
    options.input_type = request.input_type;
    // A document's punctuation has no vector (PyLate's skiplist); a query keeps all.
    if (request.input_type == core::InputType::kDocument) {
      spec.multi.skip_ids = &model_->colbert->skip_ids;
    }
  }
  absl::StatusOr<std::unique_ptr<BatchRequest>> built = BuildInputs(request.inputs, options, spec);
  if (built.ok() && request.colbert) {
    const int skipped = model_->heads.multi_vector->skip_first_token ? 1 : 0;
    if (absl::Status status = CheckOutputVectors(**built, skipped); !status.ok()) {
      return status;
    }
  }
  return built;
}

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::BuildInputs(
    const std::vector<Input>& inputs, InputOptions options, OutputSpec spec) const {
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

absl::Status RequestBuilder::CheckInputCount(size_t count) const {
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

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::BuildClassify(
    const core::ClassifyRequest& request) const {
  if (absl::Status status = CheckHead(model_->heads, HeadRequest::kClassify); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckInputCount(request.inputs.size()); !status.ok()) return status;
  for (int i = 0; i < static_cast<int>(request.inputs.size()); ++i) {
    const Input::Kind kind = request.inputs[static_cast<size_t>(i)].kind;
    if (kind != Input::Kind::kText && kind != Input::Kind::kTextPair) {
      return WithInputIndex(i, absl::InvalidArgumentError("classify takes a text or a text pair"));
    }
  }
  OutputSpec spec;
  spec.head = OutputHead::kClassify;
  InputOptions options;
  options.truncate = request.truncate.value_or(limits_.auto_truncate);
  options.side = request.truncation_side;
  return BuildInputs(request.inputs, options, spec);
}

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::BuildSparse(
    const core::SparseRequest& request) const {
  if (absl::Status status = CheckHead(model_->heads, HeadRequest::kSparse); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckInputCount(request.inputs.size()); !status.ok()) return status;
  if (absl::Status status = CheckMaxActiveDims(request.max_active_dims); !status.ok()) {
    return status;
  }
  OutputSpec spec;
  spec.head = OutputHead::kSparse;
  spec.sparse = model_->heads.sparse_options;
  spec.sparse.max_active_dims = request.max_active_dims;
  InputOptions options;
  options.truncate = request.truncate.value_or(limits_.auto_truncate);
  options.side = request.truncation_side;
  return BuildInputs(request.inputs, options, spec);
}

absl::Status RequestBuilder::CheckRerankRequest(const core::RerankRequest& request) const {
  if (absl::Status status = CheckTextInput(); !status.ok()) return status;
  if (request.query.empty()) {
    return WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("query is empty"));
  }
  if (absl::Status status = CheckText("query", request.query); !status.ok()) return status;
  if (request.texts.empty()) {
    return WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("texts is empty"));
  }
  if (static_cast<int>(request.texts.size()) > limits_.max_rerank_texts) {
    return absl::InvalidArgumentError(
        absl::StrCat("texts has ", request.texts.size(), " texts, more than the limit of ",
                     limits_.max_rerank_texts, " (--max-rerank-texts)"));
  }
  if (request.top_n.has_value() && *request.top_n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_n is ", *request.top_n, "; it must be 1 or more (or unset: all)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> RequestBuilder::BuildRerank(
    const core::RerankRequest& request, int max_part_inputs, int64_t max_part_tokens,
    std::vector<int>* windows) const {
  if (absl::Status status = CheckHead(model_->heads, HeadRequest::kRerank); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckRerankRequest(request); !status.ok()) return status;
  if (!model_->heads.classifier.has_value()) {
    return BuildMaxSimRerank(request, max_part_inputs, max_part_tokens);
  }
  const core::LongInput mode = long_inputs::Resolve(request.long_input, request.truncate,
                                                    limits_.long_inputs, limits_.auto_truncate);
  InputOptions options;
  options.truncate = mode == core::LongInput::kTruncate;
  options.strategy = engine::TruncationStrategy::kOnlySecond;
  options.side = request.truncation_side;
  const int max_length = model_->max_length();
  const engine::PairPrompt* prompt = model_->encoder->pair_prompt();
  // Window mode (long_inputs.h): tokenizer pairs only; a prompted pair is refused.
  const bool window = mode == core::LongInput::kWindow && prompt == nullptr && windows != nullptr;
  if (windows != nullptr) windows->clear();
  int pairs = 0;
  if (prompt == nullptr && !request.instruction.empty()) {
    return absl::InvalidArgumentError(
        "instruction is for rerankers that score pairs in a prompt (Qwen3-Reranker); this model "
        "scores the tokenizer's pairs");
  }
  // The request's instruction, else the model's default (both outlive the build).
  std::string_view instruction = request.instruction;
  if (prompt != nullptr && instruction.empty()) instruction = prompt->default_instruction;
  if (prompt != nullptr && options.truncate) {
    // The prompt and the query must leave room for a document token.
    absl::StatusOr<TokenizedInput> bare =
        FromPromptedPair(*prompt, instruction, request.query, std::string(), InputOptions());
    if (!bare.ok()) return bare.status();
    if (static_cast<int>(bare->ids.size()) >= max_length) {
      return WithInputProblem(
          InputProblem::kTooLong,
          absl::InvalidArgumentError(absl::StrCat(
              "query is too long: in the model's prompt it takes ", bare->ids.size(),
              " tokens, which leaves no room for any text token within the model's maximum of ",
              max_length)));
    }
  } else if (options.truncate) {
    // only_second cuts the text alone: a query that leaves it no token is refused.
    absl::StatusOr<engine::Encoding> query =
        model_->tokenizer->Encode(request.query, 0, engine::TruncationSide::kRight, false);
    if (!query.ok()) return query.status();
    const int specials = model_->tokenizer->num_special_tokens(/*pair=*/true);
    if (static_cast<int>(query->ids.size()) + specials >= max_length) {
      return WithInputProblem(
          InputProblem::kTooLong,
          absl::InvalidArgumentError(absl::StrCat(
              "query is ", query->ids.size(), " tokens long; with the pair's ", specials,
              " special tokens that leaves no room for any text token within the model's "
              "maximum of ",
              max_length)));
    }
  }
  std::vector<std::unique_ptr<BatchRequest>> parts;
  int64_t part_tokens = 0;
  OutputSpec spec;
  spec.head = OutputHead::kClassify;
  for (int i = 0; i < static_cast<int>(request.texts.size()); ++i) {
    const std::string& text = request.texts[static_cast<size_t>(i)];
    if (text.empty()) {
      return WithInputIndex(
          i, WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("text is empty")));
    }
    absl::StatusOr<TokenizedInput> input =
        prompt != nullptr ? FromPromptedPair(*prompt, instruction, request.query, text, options)
                          : FromText(request.query, text, /*is_pair=*/true, options);
    std::vector<TokenizedInput> split;
    if (window && !input.ok() &&
        core::FindInputError(input.status()).value_or(core::InputError{}).problem ==
            InputProblem::kTooLong) {
      absl::StatusOr<std::vector<TokenizedInput>> pair_windows = PairWindows(request.query, text);
      if (!pair_windows.ok()) return WithInputIndex(i, pair_windows.status());
      split = *std::move(pair_windows);
    } else if (!input.ok()) {
      return WithInputIndex(i, input.status());
    } else {
      split.push_back(*std::move(input));
    }
    if (window) windows->push_back(static_cast<int>(split.size()));
    pairs += static_cast<int>(split.size());
    if (pairs > limits_.max_rerank_texts) {
      return WithInputIndex(
          i, absl::InvalidArgumentError(absl::StrCat(
                 "the texts run as ", pairs, " (query, window) pairs here, more than the limit of ",
                 limits_.max_rerank_texts, " (--max-rerank-texts; each window counts as one)")));
    }
    for (TokenizedInput& pair : split) {
      AddToParts(std::move(pair), spec, 0, max_part_inputs, max_part_tokens, &part_tokens, &parts);
    }
  }
  return parts;
}

absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> RequestBuilder::BuildMaxSimRerank(
    const core::RerankRequest& request, int max_part_inputs, int64_t max_part_tokens) const {
  if (!request.instruction.empty()) {
    return absl::InvalidArgumentError(
        "instruction is for rerankers that score pairs in a prompt (Qwen3-Reranker); this model "
        "scores by MaxSim");
  }
  OutputSpec spec;
  spec.head = OutputHead::kMulti;
  spec.multi.multi_vector = true;
  InputOptions options;
  options.truncate = request.truncate.value_or(limits_.auto_truncate);
  options.side = request.truncation_side;
  if (model_->colbert.has_value()) options.colbert = &*model_->colbert;
  // Part 0: the query alone, as a query.
  std::vector<std::unique_ptr<BatchRequest>> parts;
  options.input_type = core::InputType::kQuery;
  absl::StatusOr<TokenizedInput> query = BuildInput(core::Input::Text(request.query), options);
  if (!query.ok()) {
    return absl::Status(query.status().code(), absl::StrCat("query: ", query.status().message()));
  }
  parts.push_back(std::make_unique<BatchRequest>());
  parts.back()->spec = spec;
  parts.back()->inputs.push_back(*std::move(query));
  // Then the texts, as documents, in parts of bounded size.
  options.input_type = core::InputType::kDocument;
  if (model_->colbert.has_value()) spec.multi.skip_ids = &model_->colbert->skip_ids;
  int64_t part_tokens = 0;
  for (int i = 0; i < static_cast<int>(request.texts.size()); ++i) {
    const std::string& text = request.texts[static_cast<size_t>(i)];
    if (text.empty()) {
      return WithInputIndex(
          i, WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("text is empty")));
    }
    absl::StatusOr<TokenizedInput> input = BuildInput(core::Input::Text(text), options);
    if (!input.ok()) return WithInputIndex(i, input.status());
    // Part 0 (the query) takes no texts.
    AddToParts(*std::move(input), spec, 1, max_part_inputs, max_part_tokens, &part_tokens, &parts);
  }
  return parts;
}

absl::StatusOr<OutputSpec> RequestBuilder::BuildSpec(const EncodeRequest& request) const {
  OutputSpec spec;
  const engine::SentencePipeline& pipeline = model_->pipeline;
  switch (request.pooling) {
    case PoolingChoice::kModelDefault:
      if (absl::Status status = CheckHead(model_->heads, HeadRequest::kEmbedding); !status.ok()) {
        return status;
      }
      spec.pooling = model_->default_pooling;
      spec.model_pooling = true;
      spec.apply_dense = true;
      break;
    case PoolingChoice::kMax:
      spec.pooling = engine::Pooling::kMax;
      break;
    case PoolingChoice::kMeanSqrtLen:
      spec.pooling = engine::Pooling::kMeanSqrtLen;
      break;
    case PoolingChoice::kWeightedMean:
      spec.pooling = engine::Pooling::kWeightedMean;
      break;
    case PoolingChoice::kLastToken:
      spec.pooling = engine::Pooling::kLastToken;
      break;
    case PoolingChoice::kCls:
      spec.pooling = engine::Pooling::kCls;
      break;
    case PoolingChoice::kMean:
      spec.pooling = engine::Pooling::kMean;
      break;
    case PoolingChoice::kNone:
      spec.pooling = engine::Pooling::kNone;
      break;
    case PoolingChoice::kPooler:
      if (!model_->encoder->has_pooler()) {
        return absl::InvalidArgumentError(
            "pooling POOLER needs the model's pooler weights, and this model has none");
      }
      spec.pooling = engine::Pooling::kPooler;
      break;
  }
  const bool tokens = spec.pooling == engine::Pooling::kNone;
  // Unset: the model's Normalize module decides for its embedding; token
  // states stay as they are (sentence-transformers' token_embeddings).
  spec.normalize = request.normalize.value_or(!tokens && pipeline.normalize);
  const int hidden = model_->encoder->config().hidden_size;
  const int size = tokens ? hidden : spec.model_pooling ? model_->embedding_size() : hidden;
  if (request.dimensions != 0) {
    if (tokens) {
      return absl::InvalidArgumentError(
          "dimensions applies to pooled vectors, not to pooling NONE");
    }
    if (request.dimensions < 1 || request.dimensions > size) {
      return absl::InvalidArgumentError(absl::StrCat("dimensions ", request.dimensions,
                                                     " is not within 1..", size,
                                                     " (the embedding's size)"));
    }
    spec.dimensions = request.dimensions;
  }
  return spec;
}

absl::StatusOr<std::string_view> RequestBuilder::ResolvePrompt(const EncodeRequest& request) const {
  if (!request.prompt_name.empty() && !request.prompt.empty()) {
    return absl::InvalidArgumentError("prompt_name and prompt are exclusive: send one");
  }
  if (!request.prompt.empty()) return std::string_view(request.prompt);
  if (!request.prompt_name.empty()) return FindPrompt(request.prompt_name);
  // The model's default_prompt_name applies to text inputs only.
  const std::string& fallback = model_->pipeline.default_prompt_name;
  if (fallback.empty()) return std::string_view();
  for (const Input& input : request.inputs) {
    if (input.kind == Input::Kind::kTokenIds) return std::string_view();
  }
  return FindPrompt(fallback);
}

absl::StatusOr<int> RequestBuilder::PromptTokens(const EncodeRequest& request,
                                                 std::string_view prompt) const {
  // include_prompt false: sentence-transformers leaves
  // len(tokenize(prompt).input_ids) - 1 leading tokens ([CLS] and the
  // prompt's own, not its [SEP]) out of pooling.
  if (prompt.empty() || model_->pipeline.include_prompt || model_->tokenizer == nullptr ||
      request.pooling == PoolingChoice::kNone) {
    return 0;
  }
  absl::StatusOr<engine::Encoding> encoding =
      model_->tokenizer->Encode(std::string(prompt), 0, engine::TruncationSide::kRight);
  if (!encoding.ok()) return encoding.status();
  return std::max(0, static_cast<int>(encoding->ids.size()) - 1);
}

absl::StatusOr<TokenizedInput> RequestBuilder::BuildInput(const Input& input,
                                                          InputOptions options) const {
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

absl::Status RequestBuilder::CheckText(const char* field, const std::string& text) const {
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

absl::StatusOr<std::string_view> RequestBuilder::FindPrompt(const std::string& prompt_name) const {
  if (prompt_name.empty()) return std::string_view();
  const auto& prompts = model_->pipeline.prompts;
  const auto found = prompts.find(prompt_name);
  if (found != prompts.end()) return std::string_view(found->second);
  if (prompts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prompt_name \"", prompt_name,
        "\": the model has no prompts (config_sentence_transformers.json names none)"));
  }
  std::vector<std::string> names;
  for (const auto& [name, text] : prompts) names.push_back(name);
  return absl::InvalidArgumentError(absl::StrCat("prompt_name \"", prompt_name,
                                                 "\" is not one of the model's prompts (",
                                                 absl::StrJoin(names, ", "), ")"));
}

absl::Status RequestBuilder::CheckTextInput() const {
  if (model_->tokenizer != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "text input is unavailable for this model (send token_ids): ", model_->tokenizer_error));
}

absl::StatusOr<TokenizedInput> RequestBuilder::FromColbertText(const std::string& text,
                                                               InputOptions options) const {
  if (absl::Status status = CheckTextInput(); !status.ok()) return status;
  if (absl::Status status = CheckText("text", text); !status.ok()) return status;
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
  if (absl::Status status = CheckIdsInTable(ids); !status.ok()) return status;
  input.ids = std::move(ids);
  return input;
}

absl::StatusOr<TokenizedInput> RequestBuilder::FromText(const std::string& text,
                                                        const std::string& text_pair, bool is_pair,
                                                        InputOptions options) const {
  if (absl::Status status = CheckTextInput(); !status.ok()) return status;
  if (absl::Status status = CheckText("text", text); !status.ok()) return status;
  if (is_pair) {
    if (absl::Status status = CheckText("text_pair", text_pair); !status.ok()) return status;
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
  if (absl::Status status = CheckIdsInTable(encoding->ids); !status.ok()) return status;
  TokenizedInput input;
  input.ids = std::move(encoding->ids);
  // Models with one token type (RoBERTa family) take none, whatever the
  // tokenizer's pair template numbers the second text.
  if (is_pair && model_->encoder->config().token_types() > 1) {
    input.token_type_ids = std::move(encoding->token_type_ids);
  }
  return input;
}

absl::StatusOr<TokenizedInput> RequestBuilder::FromPromptedPair(const engine::PairPrompt& prompt,
                                                                std::string_view instruction,
                                                                const std::string& query,
                                                                const std::string& document,
                                                                InputOptions options) const {
  if (!document.empty()) {
    if (absl::Status status = CheckText("text", document); !status.ok()) return status;
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
  if (absl::Status status = CheckIdsInTable(input.ids); !status.ok()) return status;
  return input;
}

absl::Status RequestBuilder::CheckIdsInTable(const std::vector<int32_t>& ids) const {
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

absl::StatusOr<TokenizedInput> RequestBuilder::FromIds(const std::vector<int32_t>& ids,
                                                       const std::vector<int32_t>& types,
                                                       InputOptions options) const {
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

absl::StatusOr<engine::Encoding> RequestBuilder::Tokenize(
    const core::TokenizeRequest& request) const {
  if (absl::Status status = CheckTextInput(); !status.ok()) return status;
  if (absl::Status status = CheckText("text", request.text); !status.ok()) return status;
  const bool is_pair = !request.text_pair.empty();
  if (is_pair) {
    if (absl::Status status = CheckText("text_pair", request.text_pair); !status.ok()) {
      return status;
    }
  }
  const int cut = request.truncate ? model_->max_length() : 0;
  return is_pair
             ? model_->tokenizer->EncodePair(request.text, request.text_pair, cut,
                                             request.truncation_side, request.add_special_tokens)
             : model_->tokenizer->Encode(request.text, cut, request.truncation_side,
                                         request.add_special_tokens);
}

absl::StatusOr<std::string> RequestBuilder::Decode(const core::DecodeRequest& request) const {
  if (absl::Status status = CheckTextInput(); !status.ok()) return status;
  return model_->tokenizer->Decode(request.ids, request.skip_special_tokens);
}

}  // namespace server
