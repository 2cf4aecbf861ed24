#include "server/core/clock.h"

namespace server {
namespace {

class SteadyClock : public Clock {
 public:
  time_point Now() override { return std::chrono::steady_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 time_point until) override {
    // time_point::max() means "until notified"; wait_until would overflow on it.
    if (until == time_point::max()) {
      cv.wait(lock);
    } else {
      cv.wait_until(lock, until);
    }
  }
};

}  // namespace

Clock* SystemClock() {
  static SteadyClock* const clock = new SteadyClock();
  return clock;
}

}  // namespace server
