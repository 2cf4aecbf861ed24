// Scalar kernels: the fallback for CPUs without AVX2 and the oracle the
// tests compare the vector kernels against. Plain loops in float (no
// double), with compensated sums so the statistics are as exact as float
// allows whatever the row length.
#include <cmath>
#include <cstdint>

#include "kernels/isa_kernels.h"

namespace engine::kernels::detail {
namespace {

// Kahan summation: error about 2 ulp of the sum, independent of n.
class CompensatedSum {
 public:
  void Add(float v) {
    const float y = v - carry_;
    const float t = sum_ + y;
    carry_ = (t - sum_) - y;
    sum_ = t;
  }
  float value() const { return sum_; }

 private:
  float sum_ = 0.0f;
  float carry_ = 0.0f;
};

void AddLayerNormRow(const AddLayerNormArgs& a, int64_t row) {
  const int64_t n = a.hidden;
  const int64_t o = row * n;
  const float* r = a.residual + o;
  const float* s = a.sublayer != nullptr ? a.sublayer + o : nullptr;
  float* out = a.out + o;
  // The summed row lives in residual_out when asked for, else in out.
  float* x = a.residual_out != nullptr ? a.residual_out + o : out;

  CompensatedSum sum;
  for (int64_t i = 0; i < n; ++i) {
    float v = r[i];
    if (s != nullptr) v += s[i];
    if (a.bias != nullptr) v += a.bias[i];
    x[i] = v;
    sum.Add(v);
  }
  const float mean = sum.value() / n;
  CompensatedSum squares;
  for (int64_t i = 0; i < n; ++i) {
    const float d = x[i] - mean;
    squares.Add(d * d);
  }
  const float rstd = 1.0f / std::sqrt(squares.value() / n + a.eps);
  for (int64_t i = 0; i < n; ++i) out[i] = a.gamma[i] * ((x[i] - mean) * rstd) + a.beta[i];
}

void ScaledSoftmaxRow(float* x, int64_t n, float scale) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = std::fmax(max, scale * x[i]);
  CompensatedSum sum;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(scale * x[i] - max);
    sum.Add(x[i]);
  }
  const float inv = 1.0f / sum.value();
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

template <>
void AddLayerNormRows<Isa::kScalar>(const AddLayerNormArgs& args, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) AddLayerNormRow(args, row);
}

template <>
void ScaledSoftmaxRows<Isa::kScalar>(float* x, int64_t begin, int64_t end, int64_t cols,
                                     float scale) {
  for (int64_t row = begin; row < end; ++row) ScaledSoftmaxRow(x + row * cols, cols, scale);
}

}  // namespace engine::kernels::detail
