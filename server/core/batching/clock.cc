#include "server/core/batching/clock.h"

namespace server::core {
namespace {

class SteadyClock : public Clock {
 public:
  time_point Now() override { return std::chrono::steady_clock::now(); }
  void WaitUntil(common::CondVar& cv, common::Mutex& mu, time_point until)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) override {
    // time_point::max() means "until signalled", as for WaitWithDeadline.
    cv.WaitWithDeadline(&mu, until);
  }
};

}  // namespace

Clock* SystemClock() {
  static SteadyClock* const clock = new SteadyClock();
  return clock;
}

}  // namespace server::core
