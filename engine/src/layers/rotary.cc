#include "layers/rotary.h"

#include <cmath>

namespace engine {

RotaryTable MakeRotaryTable(const RotaryConfig& rotary, float base, int head_size,
                            int64_t positions) {
  RotaryTable table;
  const int dims = rotary.dims > 0 ? rotary.dims : head_size;
  table.pairs = dims / 2;
  table.interleaved = rotary.interleaved;
  table.positions = positions;
  // inv_freq = 1 / base^(2i / dims); GTE's NTK scaling raises the base by
  // the factor and divides by factor^(2 / dims).
  const bool ntk = rotary.ntk_factor > 0;
  const double theta = ntk ? static_cast<double>(base) * rotary.ntk_factor : base;
  const double ntk_divisor = ntk ? std::pow(static_cast<double>(rotary.ntk_factor), 2.0 / dims) : 1;
  std::vector<double> inv_freq(static_cast<size_t>(table.pairs));
  for (int i = 0; i < table.pairs; ++i) {
    inv_freq[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / dims) / ntk_divisor;
  }
  const size_t size = static_cast<size_t>(positions) * table.pairs;
  table.cos.resize(size);
  table.sin.resize(size);
  for (int64_t p = 0; p < positions; ++p) {
    for (int i = 0; i < table.pairs; ++i) {
      const double angle = static_cast<double>(p) * inv_freq[i];
      table.cos[p * table.pairs + i] = static_cast<float>(std::cos(angle));
      table.sin[p * table.pairs + i] = static_cast<float>(std::sin(angle));
    }
  }
  return table;
}

}  // namespace engine
