#include "server/core/requests/long_inputs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/encoder.h"
#include "server/core/requests/head_results.h"

namespace server::core::long_inputs {

core::LongInput Resolve(std::optional<core::LongInput> asked, std::optional<bool> truncate,
                        std::optional<core::LongInput> server_default, bool auto_truncate) {
  if (asked.has_value()) return *asked;
  if (truncate.has_value()) return *truncate ? core::LongInput::kTruncate : core::LongInput::kError;
  if (server_default.has_value()) return *server_default;
  return auto_truncate ? core::LongInput::kTruncate : core::LongInput::kError;
}

absl::StatusOr<std::vector<InputOutput>> PoolWindows(const WindowPlan& plan,
                                                     std::vector<InputOutput> outputs,
                                                     std::vector<int>* windows) {
  std::vector<InputOutput> pooled;
  pooled.reserve(plan.inputs.size());
  windows->clear();
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const WindowedInput& input = plan.inputs[i];
    const size_t count = input.weights.size();
    if (count == 0 || input.first + count > outputs.size()) {
      return absl::InternalError(
          absl::StrCat("input ", i, "'s windows are not among the ", outputs.size(), " outputs"));
    }
    InputOutput out = std::move(outputs[input.first]);
    if (count > 1) {
      const size_t cols = out.values.size();
      std::vector<double> sum(cols, 0.0);
      double weights = 0.0;
      int tokens = 0;
      for (size_t k = 0; k < count; ++k) {
        const InputOutput& window = k == 0 ? out : outputs[input.first + k];
        if (window.values.size() != cols) {
          return absl::InternalError(absl::StrCat("input ", i, "'s window ", k, " has ",
                                                  window.values.size(), " values, not ", cols));
        }
        const double weight = input.weights[k];
        for (size_t c = 0; c < cols; ++c) sum[c] += weight * window.values[c];
        weights += weight;
        tokens += window.tokens;
      }
      for (size_t c = 0; c < cols; ++c) out.values[c] = static_cast<float>(sum[c] / weights);
      out.tokens = tokens;
    }
    // Then as one input's vector: Matryoshka, then L2 (engine::Embed's order).
    if (plan.dimensions > 0 && plan.dimensions < static_cast<int>(out.values.size())) {
      out.values.resize(static_cast<size_t>(plan.dimensions));
    }
    out.rows = 1;
    out.cols = static_cast<int>(out.values.size());
    if (plan.normalize) engine::L2Normalize(out.values.data(), out.cols);
    windows->push_back(static_cast<int>(count));
    pooled.push_back(std::move(out));
  }
  return pooled;
}

absl::StatusOr<std::vector<InputOutput>> BestWindows(const std::vector<int>& windows,
                                                     std::vector<InputOutput> outputs) {
  std::vector<InputOutput> best;
  best.reserve(windows.size());
  size_t next = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    const auto count = static_cast<size_t>(windows[i]);
    if (count == 0 || next + count > outputs.size()) {
      return absl::InternalError(
          absl::StrCat("text ", i, "'s windows are not among the ", outputs.size(), " outputs"));
    }
    size_t winner = next;
    int tokens = 0;
    for (size_t k = next; k < next + count; ++k) {
      tokens += outputs[k].tokens;
      const float score = outputs[k].values.empty() ? 0.0f : outputs[k].values.front();
      const float top = outputs[winner].values.empty() ? 0.0f : outputs[winner].values.front();
      if (score > top) winner = k;
    }
    InputOutput out = std::move(outputs[winner]);
    out.tokens = tokens;
    best.push_back(std::move(out));
    next += count;
  }
  if (next != outputs.size()) {
    return absl::InternalError(absl::StrCat(outputs.size(), " outputs for ", next, " windows of ",
                                            windows.size(), " texts"));
  }
  return best;
}

absl::StatusOr<core::RerankResult> RankBestWindows(const std::vector<int>& windows,
                                                   std::vector<InputOutput> outputs,
                                                   const core::RerankRequest& request,
                                                   engine::ScoreActivation activation) {
  absl::StatusOr<std::vector<InputOutput>> best = BestWindows(windows, std::move(outputs));
  if (!best.ok()) return best.status();
  core::RerankResult result = ToRerankResult(*std::move(best), request, activation);
  for (core::RerankHit& hit : result.results) {
    hit.windows = windows[static_cast<size_t>(hit.index)];
  }
  return result;
}

}  // namespace server::core::long_inputs
