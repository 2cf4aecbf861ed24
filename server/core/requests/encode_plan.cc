// Encode requests: embeddings (pooled as the request or the model's
// sentence-transformers pipeline says, prompts, Matryoshka dimensions) and
// token states; window mode (long_inputs.h) for inputs longer than the model.
#include "server/core/requests/plans.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"
#include "server/core/requests/long_inputs.h"

namespace server::core {
namespace {

using core::EncodeRequest;
using core::Input;
using core::InputProblem;
using core::PoolingChoice;
using core::WithInputIndex;
using core::WithInputProblem;

absl::StatusOr<std::string_view> FindPrompt(const InputTokenizer& input_tokenizer,
                                            const std::string& prompt_name) {
  const LoadedModel& model = input_tokenizer.model();
  if (prompt_name.empty()) return std::string_view();
  const auto& prompts = model.pipeline.prompts;
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

absl::StatusOr<std::string_view> ResolvePrompt(const InputTokenizer& input_tokenizer,
                                               const EncodeRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  if (!request.prompt_name.empty() && !request.prompt.empty()) {
    return absl::InvalidArgumentError("prompt_name and prompt are exclusive: send one");
  }
  if (!request.prompt.empty()) return std::string_view(request.prompt);
  if (!request.prompt_name.empty()) return FindPrompt(input_tokenizer, request.prompt_name);
  // The model's default_prompt_name applies to text inputs only.
  const std::string& fallback = model.pipeline.default_prompt_name;
  if (fallback.empty()) return std::string_view();
  for (const Input& input : request.inputs) {
    if (input.kind == Input::Kind::kTokenIds) return std::string_view();
  }
  return FindPrompt(input_tokenizer, fallback);
}

absl::StatusOr<int> PromptTokens(const InputTokenizer& input_tokenizer,
                                 const EncodeRequest& request, std::string_view prompt) {
  const LoadedModel& model = input_tokenizer.model();
  // include_prompt false: sentence-transformers leaves
  // len(tokenize(prompt).input_ids) - 1 leading tokens ([CLS] and the
  // prompt's own, not its [SEP]) out of pooling.
  if (prompt.empty() || model.pipeline.include_prompt || model.tokenizer == nullptr ||
      request.pooling == PoolingChoice::kNone) {
    return 0;
  }
  absl::StatusOr<engine::Encoding> encoding =
      model.tokenizer->Encode(std::string(prompt), 0, engine::TruncationSide::kRight);
  if (!encoding.ok()) return encoding.status();
  return std::max(0, static_cast<int>(encoding->ids.size()) - 1);
}

absl::StatusOr<OutputSpec> BuildSpec(const InputTokenizer& input_tokenizer,
                                     const EncodeRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  OutputSpec spec;
  const engine::SentencePipeline& pipeline = model.pipeline;
  switch (request.pooling) {
    case PoolingChoice::kModelDefault:
      RETURN_IF_ERROR(CheckHead(model.heads, HeadRequest::kEmbedding));
      spec.pooling = model.default_pooling;
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
      if (!model.encoder->has_pooler()) {
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
  const int hidden = model.encoder->config().hidden_size;
  const int size = tokens ? hidden : spec.model_pooling ? model.embedding_size() : hidden;
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

// What both paths of an encode request start from: the input count
// checked, the output spec (prompt tokens left out of pooling included) and
// the prompt its text inputs get.
struct SpecAndPrompt {
  OutputSpec spec;
  std::string_view prompt;
};
absl::StatusOr<SpecAndPrompt> ResolveSpecAndPrompt(const InputTokenizer& input_tokenizer,
                                                   const EncodeRequest& request) {
  RETURN_IF_ERROR(input_tokenizer.CheckInputCount(request.inputs.size()));
  SpecAndPrompt resolved;
  ASSIGN_OR_RETURN(resolved.spec, BuildSpec(input_tokenizer, request));
  ASSIGN_OR_RETURN(resolved.prompt, ResolvePrompt(input_tokenizer, request));
  ASSIGN_OR_RETURN(resolved.spec.prompt_tokens,
                   PromptTokens(input_tokenizer, request, resolved.prompt));
  return resolved;
}

bool WindowsLongInputs(const InputTokenizer& input_tokenizer, const core::EncodeRequest& request) {
  const RequestLimits& limits = input_tokenizer.limits();
  // Token states (pooling NONE) have nothing to pool windows into: refused
  // when too long (late chunking, EncodeChunks, is their long-text path).
  return request.pooling != core::PoolingChoice::kNone &&
         long_inputs::Resolve(request.long_input, request.truncate, limits.long_inputs,
                              limits.auto_truncate) == core::LongInput::kWindow;
}

absl::StatusOr<std::vector<TokenizedInput>> TextWindows(const InputTokenizer& input_tokenizer,
                                                        const std::string& text,
                                                        std::string_view prompt,
                                                        std::vector<int>* weights) {
  const LoadedModel& model = input_tokenizer.model();
  const engine::Tokenizer& tokenizer = *model.tokenizer;
  absl::StatusOr<engine::Encoding> encoding =
      tokenizer.Encode(text, 0, engine::TruncationSide::kRight, /*add_special_tokens=*/false);
  if (!encoding.ok()) return encoding.status();
  std::vector<int32_t> prompt_ids;
  if (!prompt.empty()) {
    absl::StatusOr<engine::Encoding> tokenized =
        tokenizer.Encode(prompt, 0, engine::TruncationSide::kRight, false);
    if (!tokenized.ok()) return tokenized.status();
    prompt_ids = std::move(tokenized->ids);
  }
  ASSIGN_OR_RETURN(const Specials* specials, input_tokenizer.single_layout());
  const int window_tokens =
      model.max_length() -
      static_cast<int>(specials->before.size() + specials->after.size() + prompt_ids.size());
  absl::StatusOr<std::vector<chunking::Window>> planned =
      chunking::PlanWindows(static_cast<int>(encoding->ids.size()), window_tokens,
                            input_tokenizer.WindowOverlap(window_tokens));
  if (!planned.ok()) return planned.status();
  std::vector<TokenizedInput> windows;
  weights->clear();
  for (const chunking::Window& window : *planned) {
    TokenizedInput input;
    input.ids = specials->before;
    input.ids.insert(input.ids.end(), prompt_ids.begin(), prompt_ids.end());
    AppendRange(&input.ids, encoding->ids, static_cast<size_t>(window.tokens.begin),
                static_cast<size_t>(window.tokens.end));
    input.ids.insert(input.ids.end(), specials->after.begin(), specials->after.end());
    RETURN_IF_ERROR(input_tokenizer.CheckIdsInTable(input.ids));
    windows.push_back(std::move(input));
    weights->push_back(window.owned.size());
  }
  return windows;
}

absl::StatusOr<std::vector<TokenizedInput>> IdWindows(const InputTokenizer& input_tokenizer,
                                                      const std::vector<int32_t>& ids,
                                                      const std::vector<int32_t>& types,
                                                      std::vector<int>* weights) {
  const LoadedModel& model = input_tokenizer.model();
  // The first and last ids ([CLS], [SEP]) on every window, as CutIds keeps them.
  const int inner = static_cast<int>(ids.size()) - 2;
  absl::StatusOr<std::vector<chunking::Window>> planned = chunking::PlanWindows(
      inner, model.max_length() - 2, input_tokenizer.WindowOverlap(model.max_length() - 2));
  if (!planned.ok()) return planned.status();
  std::vector<TokenizedInput> windows;
  weights->clear();
  for (const chunking::Window& window : *planned) {
    TokenizedInput input;
    const auto begin = static_cast<size_t>(window.tokens.begin + 1);
    const auto end = static_cast<size_t>(window.tokens.end + 1);
    input.ids.push_back(ids.front());
    AppendRange(&input.ids, ids, begin, end);
    input.ids.push_back(ids.back());
    if (!types.empty()) {
      input.token_type_ids.push_back(types.front());
      AppendRange(&input.token_type_ids, types, begin, end);
      input.token_type_ids.push_back(types.back());
    }
    windows.push_back(std::move(input));
    weights->push_back(window.owned.size());
  }
  return windows;
}

absl::StatusOr<std::unique_ptr<BatchRequest>> BuildWindowed(const InputTokenizer& input_tokenizer,
                                                            const core::EncodeRequest& request,
                                                            long_inputs::WindowPlan* plan) {
  const LoadedModel& model = input_tokenizer.model();
  const RequestLimits& limits = input_tokenizer.limits();
  ASSIGN_OR_RETURN(SpecAndPrompt resolved, ResolveSpecAndPrompt(input_tokenizer, request));
  OutputSpec& spec = resolved.spec;
  const std::string_view prompt = resolved.prompt;
  // Windows run unnormalized and whole; PoolWindows cuts and normalizes.
  plan->inputs.clear();
  plan->dimensions = spec.dimensions;
  plan->normalize = spec.normalize;
  spec.dimensions = 0;
  spec.normalize = false;
  const InputTokenizer::InputOptions options{/*truncate=*/false, request.truncation_side, prompt};

  auto batch_request = std::make_unique<BatchRequest>();
  batch_request->spec = spec;
  int64_t tokens = 0;
  for (int i = 0; i < static_cast<int>(request.inputs.size()); ++i) {
    const core::Input& input = request.inputs[static_cast<size_t>(i)];
    std::vector<TokenizedInput> windows;
    long_inputs::WindowedInput placed;
    placed.first = batch_request->inputs.size();
    absl::StatusOr<TokenizedInput> whole = input_tokenizer.BuildInput(input, options);
    if (whole.ok()) {
      windows.push_back(*std::move(whole));
      placed.weights = {1};
    } else {
      const std::optional<core::InputError> error = core::FindInputError(whole.status());
      const bool too_long = error.has_value() && error->problem == InputProblem::kTooLong;
      absl::StatusOr<std::vector<TokenizedInput>> split = whole.status();
      if (too_long && input.kind == core::Input::Kind::kText) {
        split = TextWindows(input_tokenizer, input.text, prompt, &placed.weights);
      } else if (too_long && input.kind == core::Input::Kind::kTokenIds) {
        split = IdWindows(input_tokenizer, input.ids, input.token_type_ids, &placed.weights);
      }
      if (!split.ok()) return WithInputIndex(i, split.status());
      windows = *std::move(split);
    }
    for (TokenizedInput& window : windows) {
      tokens += static_cast<int64_t>(window.ids.size());
      if (tokens > limits.max_tokens_per_request) {
        return WithInputIndex(
            i,
            absl::InvalidArgumentError(absl::StrCat(
                "the request reaches ", tokens, " tokens here (this input runs as ", windows.size(),
                " windows), more than the limit of ", limits.max_tokens_per_request,
                " tokens per request (--max-tokens-per-request)")));
      }
      const engine::Sequence sequence{window.ids, window.token_type_ids};
      if (absl::Status valid = model.encoder->Validate(sequence); !valid.ok()) {
        return WithInputIndex(i, valid);
      }
      batch_request->inputs.push_back(std::move(window));
    }
    if (static_cast<int>(batch_request->inputs.size()) > limits.max_inputs_per_request) {
      return WithInputIndex(
          i, absl::InvalidArgumentError(absl::StrCat(
                 "the request's inputs run as ", batch_request->inputs.size(),
                 " windows here, more than the limit of ", limits.max_inputs_per_request,
                 " inputs per request (--max-inputs-per-request; each window counts as one)")));
    }
    plan->inputs.push_back(std::move(placed));
  }
  return batch_request;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BatchRequest>> EncodeInputs(const InputTokenizer& input_tokenizer,
                                                           const EncodeRequest& request) {
  const RequestLimits& limits = input_tokenizer.limits();
  ASSIGN_OR_RETURN(SpecAndPrompt resolved, ResolveSpecAndPrompt(input_tokenizer, request));
  // Window mode runs through BuildWindowed (long_inputs.h); here it refuses.
  const InputTokenizer::InputOptions options{
      long_inputs::Resolve(request.long_input, request.truncate, limits.long_inputs,
                           limits.auto_truncate) == core::LongInput::kTruncate,
      request.truncation_side, resolved.prompt};
  absl::StatusOr<std::unique_ptr<BatchRequest>> built =
      input_tokenizer.BuildInputs(request.inputs, options, resolved.spec);
  if (built.ok() && resolved.spec.pooling == engine::Pooling::kNone) {
    RETURN_IF_ERROR(input_tokenizer.CheckOutputVectors(**built, 0));
  }
  return built;
}

absl::StatusOr<Plan<core::EncodeResult>> PlanEncode(const InputTokenizer& input_tokenizer,
                                                    const core::EncodeRequest& request) {
  if (WindowsLongInputs(input_tokenizer, request)) {
    auto windows = std::make_shared<long_inputs::WindowPlan>();
    ASSIGN_OR_RETURN(std::unique_ptr<BatchRequest> part,
                     BuildWindowed(input_tokenizer, request, windows.get()));
    const engine::Pooling pooling = part->spec.pooling;
    return OnePartPlan<core::EncodeResult>(
        std::move(part),
        [pooling, windows](std::vector<InputOutput> outputs) -> absl::StatusOr<core::EncodeResult> {
          core::EncodeResult result;
          result.pooling = pooling;
          ASSIGN_OR_RETURN(result.outputs,
                           long_inputs::PoolWindows(*windows, std::move(outputs), &result.windows));
          return result;
        });
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BatchRequest> part, EncodeInputs(input_tokenizer, request));
  const engine::Pooling pooling = part->spec.pooling;
  return OnePartPlan<core::EncodeResult>(
      std::move(part),
      [pooling](std::vector<InputOutput> outputs) -> absl::StatusOr<core::EncodeResult> {
        return core::EncodeResult{pooling, std::move(outputs), {}};
      });
}

}  // namespace server::core
