// A clock the test moves by hand. Waiters poll it every millisecond of real
// time, so Advance needs no handle on their condition variables; the test
// learns what the batcher waits for through AwaitWaitUntil.
#pragma once

#include <algorithm>
#include <chrono>
#include <set>

#include "common/mutex.h"
#include "server/core/batching/clock.h"

namespace testing_support {

class FakeClock : public server::core::Clock {
 public:
  time_point Now() ABSL_LOCKS_EXCLUDED(mu_) override {
    common::MutexLock lock(&mu_);
    return now_;
  }

  void Advance(duration d) ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    now_ += d;
  }

  void WaitUntil(common::CondVar& cv, common::Mutex& mu, time_point until)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) ABSL_LOCKS_EXCLUDED(mu_) override {
    {
      common::MutexLock own(&mu_);
      if (now_ >= until) return;
      waited_for_.insert(until);
    }
    changed_.SignalAll();
    cv.WaitWithDeadline(&mu, std::chrono::steady_clock::now() + std::chrono::milliseconds(1));
  }

  // Blocks until some thread has waited on this clock for `until` (a bounded
  // wait of real time: false means it never happened).
  bool AwaitWaitUntil(time_point until) ABSL_LOCKS_EXCLUDED(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    common::MutexLock lock(&mu_);
    while (waited_for_.count(until) == 0) {
      if (changed_.WaitWithDeadline(&mu_, give_up)) return waited_for_.count(until) > 0;
    }
    return true;
  }

 private:
  common::Mutex mu_;
  common::CondVar changed_;
  time_point now_ ABSL_GUARDED_BY(mu_) = time_point(std::chrono::hours(1000));
  std::set<time_point> waited_for_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_support
