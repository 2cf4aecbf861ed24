#pragma once

#include <chrono>

#include "server/core/batching/clock.h"

namespace server {

// A gRPC deadline (system clock; time_point::max() when the call has none)
// on the batcher's clock, which is steady.
core::Clock::time_point DeadlineOnClock(std::chrono::system_clock::time_point deadline,
                                        core::Clock* clock);

}  // namespace server
