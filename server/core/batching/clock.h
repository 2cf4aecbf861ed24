// A clock the batcher waits on, so tests can drive time by hand.
#pragma once

#include <chrono>

#include "common/mutex.h"

namespace server::core {

class Clock {
 public:
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point Now() = 0;
  // Waits on `cv` (holding `mu`, which the wait releases meanwhile) until
  // signalled or `until` on this clock; time_point::max() waits until signalled.
  virtual void WaitUntil(common::CondVar& cv, common::Mutex& mu, time_point until)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
};

// The real clock.
Clock* SystemClock();

}  // namespace server::core
