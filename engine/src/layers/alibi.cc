#include "layers/alibi.h"

#include <cmath>
#include <cstdlib>

namespace engine {
namespace {

// The slopes of a power-of-two head count, in double as Python computes them.
std::vector<double> PowerOfTwoSlopes(int heads) {
  const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(heads) - 3)));
  std::vector<double> slopes;
  for (int i = 0; i < heads; ++i) slopes.push_back(start * std::pow(start, i));
  return slopes;
}

std::vector<double> Slopes(int heads) {
  const int closest = 1 << static_cast<int>(std::floor(std::log2(heads)));
  std::vector<double> slopes = PowerOfTwoSlopes(closest);
  if (closest == heads) return slopes;
  const std::vector<double> next = Slopes(2 * closest);
  for (int i = 0; static_cast<int>(slopes.size()) < heads; i += 2) slopes.push_back(next[i]);
  return slopes;
}

}  // namespace

std::vector<float> AlibiSlopes(int heads) {
  std::vector<float> slopes;
  for (double slope : Slopes(heads)) slopes.push_back(static_cast<float>(slope));
  return slopes;
}

RelativePositionBias MakeAlibiBias(int heads, int max_length, float softmax_scale) {
  const std::vector<float> slopes = AlibiSlopes(heads);
  RelativePositionBias bias;
  bias.max_offset = max_length > 0 ? max_length - 1 : 0;
  const int64_t width = 2 * bias.max_offset + 1;
  bias.table.resize(static_cast<size_t>(heads * width));
  for (int h = 0; h < heads; ++h) {
    for (int64_t d = -bias.max_offset; d <= bias.max_offset; ++d) {
      // torch: slope * -|d| in float32.
      const float value = slopes[h] * -static_cast<float>(std::llabs(d));
      bias.table[static_cast<size_t>(h * width + d + bias.max_offset)] = value / softmax_scale;
    }
  }
  return bias;
}

}  // namespace engine
