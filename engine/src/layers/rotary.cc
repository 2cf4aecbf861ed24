#include "layers/rotary.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "profile.h"

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

namespace {

// One head's leading 2 * pairs dims turned by the angles of (cos, sin).
void RotateHead(float* x, const float* cos, const float* sin, int pairs, bool interleaved) {
  if (interleaved) {
    for (int i = 0; i < pairs; ++i) {
      const float x1 = x[2 * i];
      const float x2 = x[2 * i + 1];
      x[2 * i] = x1 * cos[i] - x2 * sin[i];
      x[2 * i + 1] = x2 * cos[i] + x1 * sin[i];
    }
    return;
  }
  float* first = x;
  float* second = x + pairs;
  for (int i = 0; i < pairs; ++i) {
    const float x1 = first[i];
    const float x2 = second[i];
    first[i] = x1 * cos[i] - x2 * sin[i];
    second[i] = x2 * cos[i] + x1 * sin[i];
  }
}

}  // namespace

void ApplyRotary(const RotaryTable& table, const PackedBatch& packed, int heads, int head_size,
                 float* qkv) {
  profile::ScopedOp op(profile::Op::kRotary);
  const int64_t hidden = static_cast<int64_t>(heads) * head_size;
  const int* offsets_end = packed.offsets + packed.num_sequences + 1;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < packed.tokens; ++t) {
    // The sequence holding row t: the last offset <= t.
    const int* start = std::upper_bound(packed.offsets, offsets_end, static_cast<int>(t)) - 1;
    const int64_t position = t - *start;
    const float* cos = table.cos.data() + position * table.pairs;
    const float* sin = table.sin.data() + position * table.pairs;
    float* row = qkv + t * 3 * hidden;
    for (int h = 0; h < 2 * heads; ++h) {  // Q's heads, then K's
      RotateHead(row + static_cast<int64_t>(h) * head_size, cos, sin, table.pairs,
                 table.interleaved);
    }
  }
}

}  // namespace engine
