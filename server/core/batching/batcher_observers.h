// Several BatcherObservers behind one: the server's metrics, and an optional
// observer of the caller's (tests watch the queue through it).
#pragma once

#include <vector>

#include "server/core/batching/batch_request.h"

namespace server::core {

class BatcherObservers : public BatcherObserver {
 public:
  // Null entries are skipped. Each must outlive this object.
  explicit BatcherObservers(std::vector<BatcherObserver*> observers) {
    for (BatcherObserver* observer : observers) {
      if (observer != nullptr) observers_.push_back(observer);
    }
  }

  void OnQueueChanged(int64_t requests, int64_t tokens) override {
    for (BatcherObserver* observer : observers_) observer->OnQueueChanged(requests, tokens);
  }
  void OnRequestDequeued(Clock::duration queue_time) override {
    for (BatcherObserver* observer : observers_) observer->OnRequestDequeued(queue_time);
  }
  void OnBatchDone(int inputs, int64_t tokens, Clock::duration engine_time) override {
    for (BatcherObserver* observer : observers_) observer->OnBatchDone(inputs, tokens, engine_time);
  }

 private:
  std::vector<BatcherObserver*> observers_;
};

}  // namespace server::core
