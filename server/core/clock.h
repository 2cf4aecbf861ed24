// A clock the batcher waits on, so tests can drive time by hand.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace server {

class Clock {
 public:
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point Now() = 0;
  // Waits on `cv` (holding `lock`) until notified or `until` on this clock.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         time_point until) = 0;
};

// The real clock.
Clock* SystemClock();

}  // namespace server
