#include "server/core/batching/request_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace server::core {

void RequestQueue::Push(std::shared_ptr<PendingRequest> request) {
  const std::vector<TokenizedInput>& inputs = request->request->inputs;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    const auto tokens = static_cast<int64_t>(inputs[i].ids.size());
    inputs_.push_back(QueuedInput{request, i, tokens});
    tokens_ += tokens;
  }
  ++requests_;
}

QueuedInput RequestQueue::PopFront() {
  QueuedInput input = std::move(inputs_.front());
  inputs_.pop_front();
  tokens_ -= input.tokens;
  // Inputs of one request are contiguous and leave in order: the last one
  // leaving takes the request out of the queue.
  if (input.index + 1 == static_cast<int>(input.owner->request->inputs.size())) --requests_;
  return input;
}

std::vector<std::shared_ptr<PendingRequest>> RequestQueue::Clear() {
  std::vector<std::shared_ptr<PendingRequest>> requests;
  for (QueuedInput& input : inputs_) {
    if (requests.empty() || requests.back() != input.owner) requests.push_back(input.owner);
  }
  inputs_.clear();
  tokens_ = 0;
  requests_ = 0;
  return requests;
}

void BatchCostModel::Observe(int64_t tokens, Clock::duration time) {
  if (tokens <= 0) return;
  const double x = static_cast<double>(tokens);
  double y = std::max(0.0, std::chrono::duration<double>(time).count());
  if (known()) {
    // One-off stalls (a new engine shape, a preempted thread) count at most
    // kMaxSurprise times the expectation, so that one batch cannot make the
    // batcher refuse everything; a lasting slowdown still shows within a few.
    y = std::min(y, kMaxSurprise * (fixed_ + per_token_ * x));
  }
  weight_ = kDecay * weight_ + 1;
  sum_x_ = kDecay * sum_x_ + x;
  sum_y_ = kDecay * sum_y_ + y;
  sum_xx_ = kDecay * sum_xx_ + x * x;
  sum_xy_ = kDecay * sum_xy_ + x * y;
  const double mean_x = sum_x_ / weight_;
  const double mean_y = sum_y_ / weight_;
  const double var_x = sum_xx_ / weight_ - mean_x * mean_x;
  const double cov_xy = sum_xy_ / weight_ - mean_x * mean_y;
  // Sizes spread enough (coefficient of variation over 1/4) to fit both
  // terms; a fit whose fixed part is negative or above the mean time mixes
  // old and new speeds: keep the fixed part then.
  if (var_x > mean_x * mean_x / 16 && cov_xy > 0) {
    const double slope = cov_xy / var_x;
    const double intercept = mean_y - slope * mean_x;
    if (intercept >= 0 && intercept <= mean_y) {
      fixed_ = intercept;
      per_token_ = slope;
      fitted_ = true;
      return;
    }
  }
  if (!fitted_) {
    // Never told apart: all of it per batch. Extrapolating a small batch's
    // time per token to a long queue would refuse everything (a first batch
    // of one input is mostly fixed cost); per batch, the prediction is right
    // for batches like the recent ones, and the next batches of other sizes
    // separate the two.
    fixed_ = mean_y;
    per_token_ = 0;
    mean_per_token_ = mean_y / mean_x;
    return;
  }
  fixed_ = std::min(fixed_, mean_y);
  per_token_ = (mean_y - fixed_) / mean_x;
}

Clock::duration BatchCostModel::Predict(int64_t batches, int64_t tokens) const {
  double seconds = fixed_ * static_cast<double>(batches) + per_token_ * static_cast<double>(tokens);
  if (!fitted_) {
    // The two terms are not told apart yet (every batch so far about one
    // size). Taking it all as fixed makes a small request after full batches
    // look as long as a full batch: with a tight deadline every request is
    // refused, no batch runs, and the model never learns otherwise. Taking it
    // all per token makes a long queue after small batches look hopeless.
    // The smaller of the two refuses neither.
    seconds = std::min(seconds, mean_per_token_ * static_cast<double>(tokens));
  }
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace server::core
