// ALiBi (Press et al., "Train Short, Test Long"), as JinaBERT applies it:
// head h adds -slope(h) * |i - j| to its scaled attention scores, with
// the fixed geometric slopes 2^(-8 (h + 1) / n) for n heads a power of two
// and, otherwise, those of the nearest lower power of two followed by
// every other slope of the next one. Expanded at load into the relative
// bias table the attention kernels add (layers/relative_position.h).
#pragma once

#include <vector>

#include "layers/relative_position.h"

namespace engine {

// The slopes of `heads` heads, rounded to float32 as torch stores them.
std::vector<float> AlibiSlopes(int heads);

// The bias of every distance up to max_length - 1, divided by
// `softmax_scale` as the kernels expect.
RelativePositionBias MakeAlibiBias(int heads, int max_length, float softmax_scale);

}  // namespace engine
