// Rerank requests in all their modes: a cross-encoder's (query, text) pairs
// (cut, or as (query, window) pairs in window mode), a prompted reranker's
// prompts (Qwen3-Reranker), and ColBERT's MaxSim; in parts of bounded size.
#include "server/core/requests/plans.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"
#include "server/core/requests/head_results.h"
#include "server/core/requests/long_inputs.h"

namespace server::core {
namespace {

using core::InputProblem;
using core::WithInputIndex;
using core::WithInputProblem;

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

absl::Status CheckRerankRequest(const InputTokenizer& input_tokenizer,
                                const core::RerankRequest& request) {
  const RequestLimits& limits = input_tokenizer.limits();
  RETURN_IF_ERROR(input_tokenizer.CheckTextInput());
  if (request.query.empty()) {
    return WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("query is empty"));
  }
  RETURN_IF_ERROR(input_tokenizer.CheckText("query", request.query));
  if (request.texts.empty()) {
    return WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("texts is empty"));
  }
  if (static_cast<int>(request.texts.size()) > limits.max_rerank_texts) {
    return absl::InvalidArgumentError(
        absl::StrCat("texts has ", request.texts.size(), " texts, more than the limit of ",
                     limits.max_rerank_texts, " (--max-rerank-texts)"));
  }
  if (request.top_n.has_value() && *request.top_n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_n is ", *request.top_n, "; it must be 1 or more (or unset: all)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TokenizedInput>> PairWindows(const InputTokenizer& input_tokenizer,
                                                        const std::string& query,
                                                        const std::string& text) {
  const LoadedModel& model = input_tokenizer.model();
  const engine::Tokenizer& tokenizer = *model.tokenizer;
  absl::StatusOr<engine::Encoding> query_tokens =
      tokenizer.Encode(query, 0, engine::TruncationSide::kRight, false);
  if (!query_tokens.ok()) return query_tokens.status();
  absl::StatusOr<engine::Encoding> text_tokens =
      tokenizer.Encode(text, 0, engine::TruncationSide::kRight, false);
  if (!text_tokens.ok()) return text_tokens.status();
  ASSIGN_OR_RETURN(const PairLayout* layout, input_tokenizer.pair_layout());
  const std::vector<int32_t>& q = query_tokens->ids;
  const std::vector<int32_t>& t = text_tokens->ids;
  const int specials =
      static_cast<int>(layout->before.size() + layout->middle.size() + layout->after.size());
  const int window_tokens = model.max_length() - specials - static_cast<int>(q.size());
  if (window_tokens < 1) {
    return WithInputProblem(
        InputProblem::kTooLong,
        absl::InvalidArgumentError(absl::StrCat(
            "query is ", q.size(), " tokens long; with the pair's ", specials,
            " special tokens that leaves no room for any text token within the model's maximum "
            "of ",
            model.max_length())));
  }
  absl::StatusOr<std::vector<chunking::Window>> planned = chunking::PlanWindows(
      static_cast<int>(t.size()), window_tokens, input_tokenizer.WindowOverlap(window_tokens));
  if (!planned.ok()) return planned.status();
  const bool typed = model.encoder->config().token_types() > 1;
  std::vector<TokenizedInput> windows;
  for (const chunking::Window& window : *planned) {
    const auto begin = static_cast<size_t>(window.tokens.begin);
    const auto end = static_cast<size_t>(window.tokens.end);
    TokenizedInput input;
    input.ids = layout->before;
    input.ids.insert(input.ids.end(), q.begin(), q.end());
    input.ids.insert(input.ids.end(), layout->middle.begin(), layout->middle.end());
    AppendRange(&input.ids, t, begin, end);
    input.ids.insert(input.ids.end(), layout->after.begin(), layout->after.end());
    if (typed) {
      std::vector<int32_t>& types = input.token_type_ids;
      types = layout->before_types;
      types.insert(types.end(), q.size(), layout->first_type);
      types.insert(types.end(), layout->middle_types.begin(), layout->middle_types.end());
      types.insert(types.end(), end - begin, layout->second_type);
      types.insert(types.end(), layout->after_types.begin(), layout->after_types.end());
    }
    RETURN_IF_ERROR(input_tokenizer.CheckIdsInTable(input.ids));
    windows.push_back(std::move(input));
  }
  return windows;
}

absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> BuildMaxSimRerank(
    const InputTokenizer& input_tokenizer, const core::RerankRequest& request, int max_part_inputs,
    int64_t max_part_tokens) {
  const LoadedModel& model = input_tokenizer.model();
  if (!request.instruction.empty()) {
    return absl::InvalidArgumentError(
        "instruction is for rerankers that score pairs in a prompt (Qwen3-Reranker); this model "
        "scores by MaxSim");
  }
  OutputSpec spec;
  spec.head = OutputHead::kMulti;
  spec.multi.multi_vector = true;
  InputTokenizer::InputOptions options =
      input_tokenizer.CutOptions(request.truncate, request.truncation_side);
  if (model.colbert.has_value()) options.colbert = &*model.colbert;
  // Part 0: the query alone, as a query.
  std::vector<std::unique_ptr<BatchRequest>> parts;
  options.input_type = core::InputType::kQuery;
  absl::StatusOr<TokenizedInput> query =
      input_tokenizer.BuildInput(core::Input::Text(request.query), options);
  if (!query.ok()) {
    return absl::Status(query.status().code(), absl::StrCat("query: ", query.status().message()));
  }
  parts.push_back(std::make_unique<BatchRequest>());
  parts.back()->spec = spec;
  parts.back()->inputs.push_back(*std::move(query));
  // Then the texts, as documents, in parts of bounded size.
  options.input_type = core::InputType::kDocument;
  if (model.colbert.has_value()) spec.multi.skip_ids = &model.colbert->skip_ids;
  int64_t part_tokens = 0;
  for (int i = 0; i < static_cast<int>(request.texts.size()); ++i) {
    const std::string& text = request.texts[static_cast<size_t>(i)];
    if (text.empty()) {
      return WithInputIndex(
          i, WithInputProblem(InputProblem::kEmpty, absl::InvalidArgumentError("text is empty")));
    }
    absl::StatusOr<TokenizedInput> input =
        input_tokenizer.BuildInput(core::Input::Text(text), options);
    if (!input.ok()) return WithInputIndex(i, input.status());
    // Part 0 (the query) takes no texts.
    AddToParts(*std::move(input), spec, 1, max_part_inputs, max_part_tokens, &part_tokens, &parts);
  }
  return parts;
}

absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> BuildRerank(
    const InputTokenizer& input_tokenizer, const core::RerankRequest& request, int max_part_inputs,
    int64_t max_part_tokens, std::vector<int>* windows) {
  const LoadedModel& model = input_tokenizer.model();
  const RequestLimits& limits = input_tokenizer.limits();
  RETURN_IF_ERROR(CheckHead(model.heads, HeadRequest::kRerank));
  RETURN_IF_ERROR(CheckRerankRequest(input_tokenizer, request));
  if (!model.heads.classifier.has_value()) {
    return BuildMaxSimRerank(input_tokenizer, request, max_part_inputs, max_part_tokens);
  }
  const core::LongInput mode = long_inputs::Resolve(request.long_input, request.truncate,
                                                    limits.long_inputs, limits.auto_truncate);
  InputTokenizer::InputOptions options;
  options.truncate = mode == core::LongInput::kTruncate;
  options.strategy = engine::TruncationStrategy::kOnlySecond;
  options.side = request.truncation_side;
  const int max_length = model.max_length();
  const engine::PairPrompt* prompt = model.encoder->pair_prompt();
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
    absl::StatusOr<TokenizedInput> bare = input_tokenizer.FromPromptedPair(
        *prompt, instruction, request.query, std::string(), InputTokenizer::InputOptions());
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
        model.tokenizer->Encode(request.query, 0, engine::TruncationSide::kRight, false);
    if (!query.ok()) return query.status();
    const int specials = model.tokenizer->num_special_tokens(/*pair=*/true);
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
        prompt != nullptr
            ? input_tokenizer.FromPromptedPair(*prompt, instruction, request.query, text, options)
            : input_tokenizer.FromText(request.query, text, /*is_pair=*/true, options);
    std::vector<TokenizedInput> split;
    if (window && !input.ok() &&
        core::FindInputError(input.status()).value_or(core::InputError{}).problem ==
            InputProblem::kTooLong) {
      absl::StatusOr<std::vector<TokenizedInput>> pair_windows =
          PairWindows(input_tokenizer, request.query, text);
      if (!pair_windows.ok()) return WithInputIndex(i, pair_windows.status());
      split = *std::move(pair_windows);
    } else if (!input.ok()) {
      return WithInputIndex(i, input.status());
    } else {
      split.push_back(*std::move(input));
    }
    if (window) windows->push_back(static_cast<int>(split.size()));
    pairs += static_cast<int>(split.size());
    if (pairs > limits.max_rerank_texts) {
      return WithInputIndex(
          i, absl::InvalidArgumentError(absl::StrCat(
                 "the texts run as ", pairs, " (query, window) pairs here, more than the limit of ",
                 limits.max_rerank_texts, " (--max-rerank-texts; each window counts as one)")));
    }
    for (TokenizedInput& pair : split) {
      AddToParts(std::move(pair), spec, 0, max_part_inputs, max_part_tokens, &part_tokens, &parts);
    }
  }
  return parts;
}

}  // namespace

absl::StatusOr<Plan<core::RerankResult>> PlanRerank(const InputTokenizer& input_tokenizer,
                                                    const core::RerankRequest& request,
                                                    PartBounds bounds) {
  // The answer needs the texts (return_text) and top_n, not the request object.
  auto windows = std::make_shared<std::vector<int>>();  // window mode: per text
  auto kept = std::make_shared<core::RerankRequest>();
  kept->top_n = request.top_n;
  kept->return_text = request.return_text;
  kept->raw_scores = request.raw_scores;
  if (request.return_text) kept->texts = request.texts;
  const LoadedModel* model = &input_tokenizer.model();
  Plan<core::RerankResult> plan;
  ASSIGN_OR_RETURN(plan.parts, BuildRerank(input_tokenizer, request, bounds.max_inputs,
                                           bounds.max_tokens, windows.get()));
  plan.finish = [kept, model,
                 windows](std::vector<InputOutput> outputs) -> absl::StatusOr<core::RerankResult> {
    if (!model->heads.classifier.has_value()) {  // MaxSim (CheckHead allowed it)
      return ToMaxSimRerankResult(std::move(outputs), *kept, *model->heads.multi_vector);
    }
    if (windows->empty()) {
      return ToRerankResult(std::move(outputs), *kept, model->heads.classifier->activation);
    }
    return long_inputs::RankBestWindows(*windows, std::move(outputs), *kept,
                                        model->heads.classifier->activation);
  };
  return plan;
}

}  // namespace server::core
