#include "server/request_queue.h"

#include <utility>

namespace server {

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

bool RequestQueue::FillsBatch(int64_t max_tokens, int max_inputs) const {
  int64_t tokens = 0;
  int count = 0;
  for (const QueuedInput& input : inputs_) {
    if (count == max_inputs || tokens + input.tokens > max_tokens) return true;
    tokens += input.tokens;
    ++count;
  }
  return count == max_inputs || tokens == max_tokens;
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

}  // namespace server
