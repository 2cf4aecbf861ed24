#include "server/core/requests/late_chunking.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/tokenizer.h"
#include "server/core/api/utf8.h"

namespace server::core::chunking {
namespace {

bool IsContinuationByte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

absl::Status ChunkError(size_t index, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("chunks[", index, "]: ", message));
}

}  // namespace

absl::StatusOr<std::vector<Window>> PlanWindows(int text_tokens, int window_tokens,
                                                std::optional<int> overlap) {
  if (window_tokens < 1) {
    return absl::InvalidArgumentError(absl::StrCat("the model's maximum length leaves ",
                                                   window_tokens,
                                                   " tokens per window beside its special tokens"));
  }
  const int shared = overlap.value_or(window_tokens / 4);
  if (shared < 0 || shared >= window_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_overlap is ", shared, "; it must be within 0..", window_tokens - 1,
                     " (a window holds ", window_tokens, " of the text's tokens)"));
  }
  std::vector<Window> windows;
  const int stride = window_tokens - shared;
  for (int begin = 0;; begin += stride) {
    Window window;
    window.tokens = {begin, std::min(begin + window_tokens, text_tokens)};
    windows.push_back(window);
    if (window.tokens.end >= text_tokens) break;
  }
  // The earlier window keeps the first ceil(shared / 2) shared tokens.
  for (size_t k = 0; k < windows.size(); ++k) {
    windows[k].owned.begin = k == 0 ? 0 : windows[k].tokens.begin + (shared + 1) / 2;
    if (k > 0) windows[k - 1].owned.end = windows[k].owned.begin;
  }
  windows.back().owned.end = text_tokens;
  return windows;
}

int CodePointLength(std::string_view text) {
  int length = 0;
  for (char byte : text) length += IsContinuationByte(byte) ? 0 : 1;
  return length;
}

std::vector<core::ChunkSpan> CodePointSpans(std::string_view text,
                                            const std::vector<std::pair<int, int>>& byte_offsets) {
  // before[b]: the characters that start before byte b.
  std::vector<int> before(text.size() + 1, 0);
  for (size_t b = 0; b < text.size(); ++b) {
    before[b + 1] = before[b] + (IsContinuationByte(text[b]) ? 0 : 1);
  }
  const auto clamp = [&text](int byte) {
    return static_cast<size_t>(std::clamp(byte, 0, static_cast<int>(text.size())));
  };
  std::vector<core::ChunkSpan> spans;
  spans.reserve(byte_offsets.size());
  for (const auto& [begin, end] : byte_offsets) {
    const size_t b = clamp(begin);
    // A start inside a character belongs to that character.
    const int start = before[b] - (b < text.size() && IsContinuationByte(text[b]) ? 1 : 0);
    spans.push_back({start, before[clamp(end)]});
  }
  return spans;
}

absl::StatusOr<std::vector<TokenRange>> TokensOfSpans(
    const std::vector<core::ChunkSpan>& chunks, const std::vector<core::ChunkSpan>& token_spans,
    int text_length) {
  std::vector<TokenRange> ranges;
  ranges.reserve(chunks.size());
  int token = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const core::ChunkSpan& chunk = chunks[i];
    if (chunk.start < 0) {
      return ChunkError(i, absl::StrCat("start ", chunk.start, " is negative"));
    }
    if (chunk.end <= chunk.start) {
      return ChunkError(i, absl::StrCat("[", chunk.start, ", ", chunk.end,
                                        ") is empty: end must be greater than start"));
    }
    if (chunk.end > text_length) {
      return ChunkError(i, absl::StrCat("end ", chunk.end, " is past the text's end (", text_length,
                                        " code points)"));
    }
    if (i > 0 && chunk.start < chunks[i - 1].end) {
      return ChunkError(
          i, absl::StrCat("start ", chunk.start, " is before chunks[", i - 1, "]'s end ",
                          chunks[i - 1].end, " (chunks must be sorted and must not overlap)"));
    }
    while (token < static_cast<int>(token_spans.size()) &&
           token_spans[static_cast<size_t>(token)].start < chunk.start) {
      ++token;
    }
    TokenRange range{token, token};
    while (range.end < static_cast<int>(token_spans.size()) &&
           token_spans[static_cast<size_t>(range.end)].start < chunk.end) {
      ++range.end;
    }
    if (range.size() == 0) {
      return ChunkError(i, absl::StrCat("[", chunk.start, ", ", chunk.end,
                                        ") holds no token (only whitespace or characters the "
                                        "tokenizer drops)"));
    }
    token = range.end;
    ranges.push_back(range);
  }
  return ranges;
}

std::vector<TokenRange> SplitTokens(int token_count, int chunk_tokens) {
  std::vector<TokenRange> ranges;
  for (int begin = 0; begin < token_count; begin += chunk_tokens) {
    ranges.push_back({begin, std::min(begin + chunk_tokens, token_count)});
  }
  return ranges;
}

absl::StatusOr<std::vector<float>> StitchStates(const std::vector<Window>& windows,
                                                const std::vector<InputOutput>& outputs,
                                                int leading_specials, int hidden, int text_tokens) {
  if (outputs.size() != windows.size()) {
    return absl::InternalError(
        absl::StrCat(outputs.size(), " outputs for ", windows.size(), " windows"));
  }
  std::vector<float> states(static_cast<size_t>(text_tokens) * static_cast<size_t>(hidden));
  for (size_t k = 0; k < windows.size(); ++k) {
    const Window& window = windows[k];
    const InputOutput& output = outputs[k];
    if (output.cols != hidden || output.rows < leading_specials + window.tokens.size() ||
        output.values.size() != static_cast<size_t>(output.rows) * static_cast<size_t>(hidden)) {
      return absl::InternalError(absl::StrCat(
          "window ", k, " came back with ", output.rows, " x ", output.cols, " states, not its ",
          window.tokens.size(), " tokens' (+ specials) x ", hidden));
    }
    for (int t = window.owned.begin; t < window.owned.end; ++t) {
      const size_t row = static_cast<size_t>(leading_specials + t - window.tokens.begin);
      std::copy_n(output.values.begin() + static_cast<std::ptrdiff_t>(row * hidden), hidden,
                  states.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t) * hidden));
    }
  }
  return states;
}

absl::StatusOr<ChunkPlan> PlanChunks(const InputTokenizer& input_tokenizer,
                                     const core::ChunksRequest& request,
                                     std::vector<TokenizedInput>* inputs) {
  const LoadedModel& model = input_tokenizer.model();
  const RequestLimits& limits = input_tokenizer.limits();
  if (model.tokenizer == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("late chunking needs the model's tokenizer: ", model.tokenizer_error));
  }
  const std::string& text = request.text;
  if (text.empty()) return absl::InvalidArgumentError("text is empty");
  if (static_cast<int64_t>(text.size()) > limits.max_text_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("text is ", text.size(),
                                                   " bytes, more than the limit of ",
                                                   limits.max_text_bytes, " (--max-text-bytes)"));
  }
  size_t bad_byte = 0;
  if (!IsValidUtf8(text, &bad_byte)) {
    return absl::InvalidArgumentError(
        absl::StrCat("text is not valid UTF-8 (at byte ", bad_byte, ")"));
  }
  const bool explicit_chunks = !request.chunks.empty();
  if (explicit_chunks == (request.chunk_tokens != 0)) {
    return absl::InvalidArgumentError(
        explicit_chunks ? "chunks and chunk_tokens are exclusive: send one"
                        : "send either chunks (spans of the text) or chunk_tokens (> 0)");
  }
  if (request.chunk_tokens < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk_tokens is ", request.chunk_tokens, "; it must be 1 or more"));
  }

  ChunkPlan plan;
  const engine::SentencePipeline& pipeline = model.pipeline;
  const int hidden = model.encoder->config().hidden_size;
  plan.options.pooling = {engine::Pooling::kMean};
  plan.options.apply_dense = !pipeline.dense.empty();
  if (plan.options.apply_dense && pipeline.dense.front().in_features != hidden) {
    return absl::FailedPreconditionError(
        absl::StrCat("the model's Dense layers take ", pipeline.dense.front().in_features,
                     " values (its pooling concatenates ", pipeline.pooling_names(),
                     "); late chunking pools each chunk by its mean, ", hidden, " values"));
  }
  const int size = plan.options.apply_dense ? pipeline.dense.back().out_features : hidden;
  if (request.dimensions < 0 || request.dimensions > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dimensions ", request.dimensions, " is not within 1..", size, " (the embedding's size)"));
  }
  plan.options.dimensions = request.dimensions;
  plan.options.normalize = request.normalize.value_or(pipeline.normalize);

  absl::StatusOr<engine::Encoding> encoding = model.tokenizer->Encode(
      text, 0, engine::TruncationSide::kRight, /*add_special_tokens=*/false);
  if (!encoding.ok()) return encoding.status();
  plan.text_tokens = static_cast<int>(encoding->ids.size());
  if (plan.text_tokens == 0) {
    return absl::InvalidArgumentError("text holds no token (only whitespace?)");
  }
  const std::vector<core::ChunkSpan> token_spans = CodePointSpans(text, encoding->offsets);
  if (explicit_chunks) {
    absl::StatusOr<std::vector<TokenRange>> chunks =
        TokensOfSpans(request.chunks, token_spans, CodePointLength(text));
    if (!chunks.ok()) return chunks.status();
    plan.chunks = *std::move(chunks);
    plan.spans = request.chunks;
  } else {
    plan.chunks = SplitTokens(plan.text_tokens, request.chunk_tokens);
    for (const TokenRange& range : plan.chunks) {
      plan.spans.push_back({token_spans[static_cast<size_t>(range.begin)].start,
                            token_spans[static_cast<size_t>(range.end - 1)].end});
    }
  }

  ASSIGN_OR_RETURN(const Specials* specials, input_tokenizer.single_layout());
  plan.leading_specials = static_cast<int>(specials->before.size());
  const int special_count = static_cast<int>(specials->before.size() + specials->after.size());
  absl::StatusOr<std::vector<Window>> windows =
      PlanWindows(plan.text_tokens, model.max_length() - special_count, request.window_overlap);
  if (!windows.ok()) return windows.status();
  plan.windows = *std::move(windows);

  inputs->clear();
  inputs->reserve(plan.windows.size());
  int64_t tokens = 0;
  for (const Window& window : plan.windows) {
    TokenizedInput input;
    input.ids.reserve(static_cast<size_t>(window.tokens.size() + special_count));
    input.ids = specials->before;
    input.ids.insert(input.ids.end(),
                     encoding->ids.begin() + static_cast<std::ptrdiff_t>(window.tokens.begin),
                     encoding->ids.begin() + static_cast<std::ptrdiff_t>(window.tokens.end));
    input.ids.insert(input.ids.end(), specials->after.begin(), specials->after.end());
    tokens += static_cast<int64_t>(input.ids.size());
    if (tokens > limits.max_tokens_per_request) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the text's ", plan.windows.size(), " windows take more than the limit of ",
          limits.max_tokens_per_request, " tokens per request (--max-tokens-per-request)"));
    }
    const engine::Sequence sequence{input.ids, input.token_type_ids};
    RETURN_IF_ERROR(model.encoder->Validate(sequence));
    inputs->push_back(std::move(input));
  }
  return plan;
}

absl::StatusOr<core::ChunksResult> PoolChunks(const LoadedModel& model, const ChunkPlan& plan,
                                              const std::vector<InputOutput>& outputs) {
  const int hidden = model.encoder->config().hidden_size;
  absl::StatusOr<std::vector<float>> states =
      StitchStates(plan.windows, outputs, plan.leading_specials, hidden, plan.text_tokens);
  if (!states.ok()) return states.status();
  core::ChunksResult result;
  result.windows = static_cast<int>(plan.windows.size());
  result.tokens = plan.text_tokens;
  result.chunks.reserve(plan.chunks.size());
  engine::EncodeResult chunk_states;
  chunk_states.hidden_size = hidden;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const TokenRange& range = plan.chunks[i];
    // The chunk's token states alone, as one sequence for the pipeline.
    chunk_states.offsets = {0, range.size()};
    chunk_states.hidden_states.assign(
        states->begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(range.begin) * hidden),
        states->begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(range.end) * hidden));
    core::ChunkEmbedding chunk;
    chunk.start = plan.spans[i].start;
    chunk.end = plan.spans[i].end;
    chunk.tokens = range.size();
    RETURN_IF_ERROR(engine::Embed(model.pipeline, *model.encoder, chunk_states, 0, plan.options,
                                  &chunk.values));
    result.chunks.push_back(std::move(chunk));
  }
  return result;
}

}  // namespace server::core::chunking
