#include "server/grpc/call_deadline.h"

namespace server {

core::Clock::time_point DeadlineOnClock(std::chrono::system_clock::time_point deadline,
                                        core::Clock* clock) {
  if (deadline == std::chrono::system_clock::time_point::max())
    return core::Clock::time_point::max();
  const auto left = deadline - std::chrono::system_clock::now();
  // Far-future deadlines would overflow the steady clock's arithmetic.
  if (left > std::chrono::hours(24 * 365)) return core::Clock::time_point::max();
  return clock->Now() + std::chrono::duration_cast<core::Clock::duration>(left);
}

}  // namespace server
