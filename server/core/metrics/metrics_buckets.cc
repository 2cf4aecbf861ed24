#include "server/core/metrics/metrics_buckets.h"

#include <algorithm>
#include <string>

namespace server::core {

std::vector<double> DurationBuckets() {
  static constexpr const char* kE6[] = {"1", "1.5", "2.2", "3.3", "4.7", "6.8"};
  std::vector<double> bounds;
  for (int exponent = -4; exponent < 1; ++exponent) {
    for (const char* mantissa : kE6) {
      // Parsed from decimal text, so each bound is the double nearest to it
      // and prints back as written ("0.0015", not "0.0015000000000000000").
      bounds.push_back(std::stod(std::string(mantissa) + "e" + std::to_string(exponent)));
    }
  }
  bounds.push_back(10.0);
  return bounds;
}

std::vector<double> CountBuckets(int64_t limit) {
  std::vector<double> bounds;
  for (int64_t power = 1; power < limit; power *= 2) {
    bounds.push_back(static_cast<double>(power));
    const int64_t half_step = power + power / 2;  // 1.5 * power (power >= 2)
    if (power >= 2 && half_step < limit) bounds.push_back(static_cast<double>(half_step));
  }
  bounds.push_back(static_cast<double>(std::max<int64_t>(limit, 1)));
  return bounds;
}

}  // namespace server::core
