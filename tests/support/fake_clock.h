// A clock the test moves by hand. Waiters poll it every millisecond of real
// time, so Advance needs no handle on their condition variables; the test
// learns what the batcher waits for through AwaitWaitUntil.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "server/core/clock.h"

namespace testing_support {

class FakeClock : public server::Clock {
 public:
  time_point Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }

  void Advance(duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 time_point until) override {
    {
      std::lock_guard<std::mutex> own(mu_);
      if (now_ >= until) return;
      waited_for_.insert(until);
    }
    changed_.notify_all();
    cv.wait_for(lock, std::chrono::milliseconds(1));
  }

  // Blocks until some thread has waited on this clock for `until` (a bounded
  // wait of real time: false means it never happened).
  bool AwaitWaitUntil(time_point until) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(20),
                             [&] { return waited_for_.count(until) > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  time_point now_ = time_point(std::chrono::hours(1000));
  std::set<time_point> waited_for_;
};

}  // namespace testing_support
