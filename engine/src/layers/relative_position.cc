#include "layers/relative_position.h"

#include <cmath>
#include <cstdlib>

namespace engine {

int RelativePositionBucket(int64_t relative_position, int num_buckets, int max_distance) {
  const int64_t n = -relative_position;
  const int half = num_buckets / 2;
  const int bucket_base = n < 0 ? half : 0;
  const int64_t distance = std::llabs(n);
  const int max_exact = half / 2;
  if (distance < max_exact) return bucket_base + static_cast<int>(distance);
  // float32 throughout, in transformers' order of operations.
  const float log_ratio = std::log(static_cast<float>(distance) / static_cast<float>(max_exact));
  const float log_range = static_cast<float>(
      std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float scaled = log_ratio / log_range * static_cast<float>(half - max_exact);
  int64_t large = max_exact + static_cast<int64_t>(scaled);
  if (large > half - 1) large = half - 1;
  return bucket_base + static_cast<int>(large);
}

RelativePositionBias MakeRelativePositionBias(const std::vector<float>& weight, int buckets,
                                              int heads, int max_length, int max_distance,
                                              float softmax_scale) {
  RelativePositionBias bias;
  bias.max_offset = max_length > 0 ? max_length - 1 : 0;
  const int64_t width = 2 * bias.max_offset + 1;
  bias.table.resize(static_cast<size_t>(heads * width));
  for (int64_t d = -bias.max_offset; d <= bias.max_offset; ++d) {
    const int bucket = RelativePositionBucket(d, buckets, max_distance);
    for (int h = 0; h < heads; ++h) {
      bias.table[static_cast<size_t>(h * width + d + bias.max_offset)] =
          weight[static_cast<size_t>(bucket) * heads + h] / softmax_scale;
    }
  }
  return bias;
}

}  // namespace engine
