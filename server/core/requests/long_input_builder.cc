// RequestBuilder's window mode (server/core/requests/long_inputs.h): a too-long input
// as overlapping windows, planned as late chunking plans them.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/api/input_error.h"
#include "server/core/requests/late_chunking.h"
#include "server/core/requests/request_builder.h"

namespace server {
namespace {

using core::InputProblem;
using core::WithInputIndex;
using core::WithInputProblem;

// The pair template's special tokens (before, between, after) and token
// types, learnt from a probe pair encoded with and without them.
struct PairLayout {
  std::vector<int32_t> before, middle, after;
  std::vector<int32_t> before_types, middle_types, after_types;
  int32_t first_type = 0;
  int32_t second_type = 0;
};

absl::StatusOr<PairLayout> PairLayoutOf(const engine::Tokenizer& tokenizer) {
  const auto bare = [&](std::string_view text) {
    return tokenizer.Encode(text, 0, engine::TruncationSide::kRight, false);
  };
  absl::StatusOr<engine::Encoding> a = bare("a");
  absl::StatusOr<engine::Encoding> b = bare("b");
  absl::StatusOr<engine::Encoding> pair =
      tokenizer.EncodePair("a", "b", 0, engine::TruncationSide::kRight, true);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (!pair.ok()) return pair.status();
  const std::vector<int32_t>& all = pair->ids;
  std::vector<int32_t> types = pair->token_type_ids;
  types.resize(all.size(), 0);
  const auto at = [&](size_t from, const std::vector<int32_t>& body) -> size_t {
    for (size_t p = from; p + body.size() <= all.size(); ++p) {
      if (std::equal(body.begin(), body.end(), all.begin() + static_cast<std::ptrdiff_t>(p))) {
        return p;
      }
    }
    return all.size() + 1;
  };
  const size_t first = at(0, a->ids);
  const size_t second = first > all.size() ? first : at(first + a->ids.size(), b->ids);
  if (a->ids.empty() || b->ids.empty() || second > all.size()) {
    return absl::InternalError(
        "the tokenizer's special tokens for a pair could not be told apart from its tokens");
  }
  const auto slice = [](const std::vector<int32_t>& v, size_t from, size_t to) {
    return std::vector<int32_t>(v.begin() + static_cast<std::ptrdiff_t>(from),
                                v.begin() + static_cast<std::ptrdiff_t>(to));
  };
  PairLayout layout;
  const size_t first_end = first + a->ids.size();
  const size_t second_end = second + b->ids.size();
  layout.before = slice(all, 0, first);
  layout.middle = slice(all, first_end, second);
  layout.after = slice(all, second_end, all.size());
  layout.before_types = slice(types, 0, first);
  layout.middle_types = slice(types, first_end, second);
  layout.after_types = slice(types, second_end, all.size());
  layout.first_type = types[first];
  layout.second_type = types[second];
  return layout;
}

template <typename T>
void Append(std::vector<T>* out, const std::vector<T>& values, size_t begin, size_t end) {
  out->insert(out->end(), values.begin() + static_cast<std::ptrdiff_t>(begin),
              values.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace

std::optional<int> RequestBuilder::WindowOverlap(int window_tokens) const {
  if (!limits_.window_overlap_tokens.has_value()) return std::nullopt;
  return std::clamp(*limits_.window_overlap_tokens, 0, std::max(0, window_tokens - 1));
}

bool RequestBuilder::WindowsLongInputs(const core::EncodeRequest& request) const {
  // Token states (pooling NONE) have nothing to pool windows into: refused
  // when too long (late chunking, EncodeChunks, is their long-text path).
  return request.pooling != core::PoolingChoice::kNone &&
         long_inputs::Resolve(request.long_input, request.truncate, limits_.long_inputs,
                              limits_.auto_truncate) == core::LongInput::kWindow;
}

absl::StatusOr<std::unique_ptr<BatchRequest>> RequestBuilder::BuildWindowed(
    const core::EncodeRequest& request, long_inputs::WindowPlan* plan) const {
  if (absl::Status status = CheckInputCount(request.inputs.size()); !status.ok()) return status;
  absl::StatusOr<OutputSpec> spec = BuildSpec(request);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::string_view> prompt = ResolvePrompt(request);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<int> prompt_tokens = PromptTokens(request, *prompt);
  if (!prompt_tokens.ok()) return prompt_tokens.status();
  spec->prompt_tokens = *prompt_tokens;
  // Windows run unnormalized and whole; PoolWindows cuts and normalizes.
  plan->inputs.clear();
  plan->dimensions = spec->dimensions;
  plan->normalize = spec->normalize;
  spec->dimensions = 0;
  spec->normalize = false;
  const InputOptions options{/*truncate=*/false, request.truncation_side, *prompt};

  auto batch_request = std::make_unique<BatchRequest>();
  batch_request->spec = *spec;
  int64_t tokens = 0;
  for (int i = 0; i < static_cast<int>(request.inputs.size()); ++i) {
    const core::Input& input = request.inputs[static_cast<size_t>(i)];
    std::vector<TokenizedInput> windows;
    long_inputs::WindowedInput placed;
    placed.first = batch_request->inputs.size();
    absl::StatusOr<TokenizedInput> whole = BuildInput(input, options);
    if (whole.ok()) {
      windows.push_back(*std::move(whole));
      placed.weights = {1};
    } else {
      const std::optional<core::InputError> error = core::FindInputError(whole.status());
      const bool too_long = error.has_value() && error->problem == InputProblem::kTooLong;
      absl::StatusOr<std::vector<TokenizedInput>> split = whole.status();
      if (too_long && input.kind == core::Input::Kind::kText) {
        split = TextWindows(input.text, *prompt, &placed.weights);
      } else if (too_long && input.kind == core::Input::Kind::kTokenIds) {
        split = IdWindows(input.ids, input.token_type_ids, &placed.weights);
      }
      if (!split.ok()) return WithInputIndex(i, split.status());
      windows = *std::move(split);
    }
    for (TokenizedInput& window : windows) {
      tokens += static_cast<int64_t>(window.ids.size());
      if (tokens > limits_.max_tokens_per_request) {
        return WithInputIndex(
            i,
            absl::InvalidArgumentError(absl::StrCat(
                "the request reaches ", tokens, " tokens here (this input runs as ", windows.size(),
                " windows), more than the limit of ", limits_.max_tokens_per_request,
                " tokens per request (--max-tokens-per-request)")));
      }
      const engine::Sequence sequence{window.ids, window.token_type_ids};
      if (absl::Status valid = model_->encoder->Validate(sequence); !valid.ok()) {
        return WithInputIndex(i, valid);
      }
      batch_request->inputs.push_back(std::move(window));
    }
    if (static_cast<int>(batch_request->inputs.size()) > limits_.max_inputs_per_request) {
      return WithInputIndex(
          i, absl::InvalidArgumentError(absl::StrCat(
                 "the request's inputs run as ", batch_request->inputs.size(),
                 " windows here, more than the limit of ", limits_.max_inputs_per_request,
                 " inputs per request (--max-inputs-per-request; each window counts as one)")));
    }
    plan->inputs.push_back(std::move(placed));
  }
  return batch_request;
}

absl::StatusOr<std::vector<TokenizedInput>> RequestBuilder::TextWindows(
    const std::string& text, std::string_view prompt, std::vector<int>* weights) const {
  const engine::Tokenizer& tokenizer = *model_->tokenizer;
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
  absl::StatusOr<chunking::Specials> specials = chunking::SpecialsOf(tokenizer);
  if (!specials.ok()) return specials.status();
  const int window_tokens =
      model_->max_length() -
      static_cast<int>(specials->before.size() + specials->after.size() + prompt_ids.size());
  absl::StatusOr<std::vector<chunking::Window>> planned = chunking::PlanWindows(
      static_cast<int>(encoding->ids.size()), window_tokens, WindowOverlap(window_tokens));
  if (!planned.ok()) return planned.status();
  std::vector<TokenizedInput> windows;
  weights->clear();
  for (const chunking::Window& window : *planned) {
    TokenizedInput input;
    input.ids = specials->before;
    input.ids.insert(input.ids.end(), prompt_ids.begin(), prompt_ids.end());
    Append(&input.ids, encoding->ids, static_cast<size_t>(window.tokens.begin),
           static_cast<size_t>(window.tokens.end));
    input.ids.insert(input.ids.end(), specials->after.begin(), specials->after.end());
    if (absl::Status status = CheckIdsInTable(input.ids); !status.ok()) return status;
    windows.push_back(std::move(input));
    weights->push_back(window.owned.size());
  }
  return windows;
}

absl::StatusOr<std::vector<TokenizedInput>> RequestBuilder::IdWindows(
    const std::vector<int32_t>& ids, const std::vector<int32_t>& types,
    std::vector<int>* weights) const {
  // The first and last ids ([CLS], [SEP]) on every window, as CutIds keeps them.
  const int inner = static_cast<int>(ids.size()) - 2;
  absl::StatusOr<std::vector<chunking::Window>> planned = chunking::PlanWindows(
      inner, model_->max_length() - 2, WindowOverlap(model_->max_length() - 2));
  if (!planned.ok()) return planned.status();
  std::vector<TokenizedInput> windows;
  weights->clear();
  for (const chunking::Window& window : *planned) {
    TokenizedInput input;
    const auto begin = static_cast<size_t>(window.tokens.begin + 1);
    const auto end = static_cast<size_t>(window.tokens.end + 1);
    input.ids.push_back(ids.front());
    Append(&input.ids, ids, begin, end);
    input.ids.push_back(ids.back());
    if (!types.empty()) {
      input.token_type_ids.push_back(types.front());
      Append(&input.token_type_ids, types, begin, end);
      input.token_type_ids.push_back(types.back());
    }
    windows.push_back(std::move(input));
    weights->push_back(window.owned.size());
  }
  return windows;
}

absl::StatusOr<std::vector<TokenizedInput>> RequestBuilder::PairWindows(
    const std::string& query, const std::string& text) const {
  const engine::Tokenizer& tokenizer = *model_->tokenizer;
  absl::StatusOr<engine::Encoding> query_tokens =
      tokenizer.Encode(query, 0, engine::TruncationSide::kRight, false);
  if (!query_tokens.ok()) return query_tokens.status();
  absl::StatusOr<engine::Encoding> text_tokens =
      tokenizer.Encode(text, 0, engine::TruncationSide::kRight, false);
  if (!text_tokens.ok()) return text_tokens.status();
  absl::StatusOr<PairLayout> layout = PairLayoutOf(tokenizer);
  if (!layout.ok()) return layout.status();
  const std::vector<int32_t>& q = query_tokens->ids;
  const std::vector<int32_t>& t = text_tokens->ids;
  const int specials =
      static_cast<int>(layout->before.size() + layout->middle.size() + layout->after.size());
  const int window_tokens = model_->max_length() - specials - static_cast<int>(q.size());
  if (window_tokens < 1) {
    return WithInputProblem(
        InputProblem::kTooLong,
        absl::InvalidArgumentError(absl::StrCat(
            "query is ", q.size(), " tokens long; with the pair's ", specials,
            " special tokens that leaves no room for any text token within the model's maximum "
            "of ",
            model_->max_length())));
  }
  absl::StatusOr<std::vector<chunking::Window>> planned = chunking::PlanWindows(
      static_cast<int>(t.size()), window_tokens, WindowOverlap(window_tokens));
  if (!planned.ok()) return planned.status();
  const bool typed = model_->encoder->config().token_types() > 1;
  std::vector<TokenizedInput> windows;
  for (const chunking::Window& window : *planned) {
    const auto begin = static_cast<size_t>(window.tokens.begin);
    const auto end = static_cast<size_t>(window.tokens.end);
    TokenizedInput input;
    input.ids = layout->before;
    input.ids.insert(input.ids.end(), q.begin(), q.end());
    input.ids.insert(input.ids.end(), layout->middle.begin(), layout->middle.end());
    Append(&input.ids, t, begin, end);
    input.ids.insert(input.ids.end(), layout->after.begin(), layout->after.end());
    if (typed) {
      std::vector<int32_t>& types = input.token_type_ids;
      types = layout->before_types;
      types.insert(types.end(), q.size(), layout->first_type);
      types.insert(types.end(), layout->middle_types.begin(), layout->middle_types.end());
      types.insert(types.end(), end - begin, layout->second_type);
      types.insert(types.end(), layout->after_types.begin(), layout->after_types.end());
    }
    if (absl::Status status = CheckIdsInTable(input.ids); !status.ok()) return status;
    windows.push_back(std::move(input));
  }
  return windows;
}

}  // namespace server
