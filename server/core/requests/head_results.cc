#include "server/core/requests/head_results.h"

#include <algorithm>
#include <utility>

namespace server::core {

core::ClassifyResult ToClassifyResult(std::vector<InputOutput> outputs,
                                      const engine::ClassifierHead& head, bool raw_scores) {
  core::ClassifyResult result;
  result.predictions.reserve(outputs.size());
  for (InputOutput& output : outputs) {
    result.tokens += output.tokens;
    std::vector<float>& logits = output.values;
    if (!raw_scores) {
      engine::ApplyScoreActivation(head.activation, logits.data(), static_cast<int>(logits.size()));
    }
    std::vector<core::LabelScore> scores;
    scores.reserve(logits.size());
    for (int id = 0; id < static_cast<int>(logits.size()); ++id) {
      core::LabelScore score;
      score.id = id;
      score.label = id < static_cast<int>(head.labels.size()) ? head.labels[id]
                                                              : "LABEL_" + std::to_string(id);
      score.score = logits[static_cast<size_t>(id)];
      scores.push_back(std::move(score));
    }
    std::stable_sort(
        scores.begin(), scores.end(),
        [](const core::LabelScore& a, const core::LabelScore& b) { return a.score > b.score; });
    result.predictions.push_back(std::move(scores));
  }
  return result;
}

namespace {

// The hits of `scores` (text i's at i) by descending score (ties: lower
// index first), cut to top_n, with their texts when asked.
core::RerankResult RankHits(const std::vector<float>& scores, int64_t tokens,
                            const core::RerankRequest& request) {
  core::RerankResult result;
  result.tokens = tokens;
  result.results.reserve(scores.size());
  for (int i = 0; i < static_cast<int>(scores.size()); ++i) {
    core::RerankHit hit;
    hit.index = i;
    hit.score = scores[static_cast<size_t>(i)];
    result.results.push_back(std::move(hit));
  }
  std::stable_sort(
      result.results.begin(), result.results.end(),
      [](const core::RerankHit& a, const core::RerankHit& b) { return a.score > b.score; });
  if (request.top_n.has_value() && *request.top_n < static_cast<int>(result.results.size())) {
    result.results.resize(static_cast<size_t>(*request.top_n));
  }
  if (request.return_text) {
    for (core::RerankHit& hit : result.results) {
      hit.text = request.texts[static_cast<size_t>(hit.index)];
    }
  }
  return result;
}

}  // namespace

core::RerankResult ToRerankResult(std::vector<InputOutput> outputs,
                                  const core::RerankRequest& request,
                                  engine::ScoreActivation activation) {
  std::vector<float> scores;
  int64_t tokens = 0;
  for (const InputOutput& output : outputs) {
    tokens += output.tokens;
    float score = output.values.empty() ? 0.0f : output.values.front();
    if (!request.raw_scores) engine::ApplyScoreActivation(activation, &score, 1);
    scores.push_back(score);
  }
  return RankHits(scores, tokens, request);
}

core::RerankResult ToMaxSimRerankResult(std::vector<InputOutput> outputs,
                                        const core::RerankRequest& request,
                                        const engine::MultiVectorHead& head) {
  std::vector<float> scores;
  int64_t tokens = 0;
  for (const InputOutput& output : outputs) tokens += output.tokens;
  const InputOutput& query = outputs.front();
  for (size_t i = 1; i < outputs.size(); ++i) {
    scores.push_back(engine::MaxSimScore(head, query.vectors.data(), query.vector_rows,
                                         outputs[i].vectors.data(), outputs[i].vector_rows));
  }
  return RankHits(scores, tokens, request);
}

namespace {

std::vector<core::SparseValue> ToSparseValues(const std::vector<engine::SparseEntry>& entries,
                                              const engine::Tokenizer* tokenizer) {
  std::vector<core::SparseValue> values;
  values.reserve(entries.size());
  for (const engine::SparseEntry& entry : entries) {
    core::SparseValue value;
    value.id = entry.id;
    value.weight = entry.weight;
    if (tokenizer != nullptr) {
      absl::StatusOr<std::string> token = tokenizer->Decode({entry.id}, false);
      if (token.ok()) value.token = *std::move(token);
    }
    values.push_back(std::move(value));
  }
  return values;
}

}  // namespace

core::SparseResult ToSparseResult(std::vector<InputOutput> outputs,
                                  const engine::Tokenizer* tokenizer) {
  core::SparseResult result;
  result.outputs.reserve(outputs.size());
  for (InputOutput& output : outputs) {
    result.tokens += output.tokens;
    result.outputs.push_back(ToSparseValues(output.sparse, tokenizer));
  }
  return result;
}

core::MultiResult ToMultiResult(std::vector<InputOutput> outputs, const core::MultiRequest& request,
                                const engine::Tokenizer* tokenizer) {
  core::MultiResult result;
  result.outputs.reserve(outputs.size());
  for (InputOutput& output : outputs) {
    result.tokens += output.tokens;
    core::MultiOutput& out = result.outputs.emplace_back();
    out.tokens = output.tokens;
    if (request.dense) out.dense = std::move(output.values);
    if (request.sparse) out.sparse = ToSparseValues(output.sparse, tokenizer);
    if (request.colbert) {
      out.colbert_rows = output.vector_rows;
      out.colbert_cols = output.vector_cols;
      out.colbert = std::move(output.vectors);
    }
  }
  return result;
}

}  // namespace server::core
