// Histogram bucket upper bounds for the server's metrics (the +Inf bucket is
// implicit). Chosen once at start; see the metrics table in docs/metrics.md.
#pragma once

#include <cstdint>
#include <vector>

namespace server::core {

// Seconds, geometric from 100 us to 10 s: the E6 series 1, 1.5, 2.2, 3.3,
// 4.7, 6.8 in each decade (ratio about 1.47, six buckets per decade, 31 bounds).
// Decade bounds (1 ms, 10 ms, 100 ms, 1 s) are exact, so latency objectives
// set on them need no interpolation.
std::vector<double> DurationBuckets();

// Counts (inputs, tokens) from 1 up to `limit`: 1, 2, 3, 4, 6, 8, 12, 16, ...
// (2^k and 1.5 * 2^k, ratio about 1.41), with `limit` itself as the last bound.
std::vector<double> CountBuckets(int64_t limit);

}  // namespace server::core
