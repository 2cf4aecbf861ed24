// MPNet's relative-position attention bias: a learned value per head and
// bucket of the signed distance between key and query (transformers'
// MPNetEncoder.relative_position_bucket: exact below a quarter of the
// buckets, logarithmic up to max_distance, one half of the buckets per
// direction), added to every layer's scaled scores. Expanded at load into
// one row per head over every distance an input can have, so the attention
// kernel adds it with a contiguous load per tile instead of a pass over
// the scores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace engine {

// The bucket of relative_position = key index - query index, computed in
// float32 as transformers does (so boundaries land on the same side).
int RelativePositionBucket(int64_t relative_position, int num_buckets, int max_distance);

struct RelativePositionBias {
  int64_t max_offset = 0;    // distances in [-max_offset, max_offset]
  std::vector<float> table;  // [heads][2 * max_offset + 1]

  bool empty() const { return table.empty(); }
  // Head `head`'s bias at distance 0: bias(query i, key j) = ForHead(head)[j - i].
  const float* ForHead(int head) const {
    return table.data() + static_cast<size_t>(head) * (2 * max_offset + 1) + max_offset;
  }
};

// `weight` is the checkpoint's [buckets, heads] table. Values are divided
// by the softmax scale: the kernels add them to raw Q K^T and scale the
// sum, which gives scale * Q K^T + bias as transformers computes it.
RelativePositionBias MakeRelativePositionBias(const std::vector<float>& weight, int buckets,
                                              int heads, int max_length, int max_distance,
                                              float softmax_scale);

}  // namespace engine
