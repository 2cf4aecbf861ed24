// Random Add & Norm inputs and the double-precision formula the kernels must
// approximate, with the error scale a float computation is entitled to.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace engine::kernels::testing {

struct LayerNormCase {
  int64_t rows = 0;
  int64_t hidden = 0;
  float eps = 1e-12f;
  std::vector<float> residual, sublayer, bias, gamma, beta;
  bool use_sublayer = true;
  bool use_bias = true;

  // Values of magnitude 1-10; each row gets its own offset so the mean is
  // not always near 0 (the harder case for the statistics).
  static LayerNormCase Random(int64_t rows, int64_t hidden, bool use_sublayer, bool use_bias,
                              uint32_t seed) {
    std::mt19937 rng(seed);
    LayerNormCase c;
    c.rows = rows;
    c.hidden = hidden;
    c.use_sublayer = use_sublayer;
    c.use_bias = use_bias;
    c.residual = Uniform(rows * hidden, -10.0f, 10.0f, rng);
    const std::vector<float> offsets = Uniform(rows, -8.0f, 8.0f, rng);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < hidden; ++i) c.residual[r * hidden + i] += offsets[r];
    }
    c.sublayer = Uniform(rows * hidden, -3.0f, 3.0f, rng);
    c.bias = Uniform(hidden, -1.0f, 1.0f, rng);
    c.gamma = Uniform(hidden, -1.5f, 1.5f, rng);
    c.beta = Uniform(hidden, -1.0f, 1.0f, rng);
    return c;
  }

  AddLayerNormArgs Args(float* out, float* residual_out) const {
    AddLayerNormArgs a;
    a.residual = residual.data();
    a.sublayer = use_sublayer ? sublayer.data() : nullptr;
    a.bias = use_bias ? bias.data() : nullptr;
    a.gamma = gamma.data();
    a.beta = beta.data();
    a.eps = eps;
    a.rows = rows;
    a.hidden = hidden;
    a.out = out;
    a.residual_out = residual_out;
    return a;
  }
};

// The formula of DESIGN.md in double, straight from the inputs, plus for each
// element the scale of the error a correct float implementation may make:
//   |y - y_exact| <= k * FLT_EPSILON * scale.
// scale sums the sensitivities of y to one float rounding of each quantity:
// x = r + s + b rounds by eps*(|r|+|s|+|b|), which moves xhat by that over
// sigma (and the mean by the row average of it); the statistics and the final
// products move xhat by eps*(1 + |xhat|); beta is added with eps*|beta|.
struct LayerNormExpected {
  std::vector<double> y;
  std::vector<double> x;
  std::vector<double> scale;
};

inline LayerNormExpected ExactLayerNorm(const LayerNormCase& c) {
  LayerNormExpected e;
  const size_t total = static_cast<size_t>(c.rows * c.hidden);
  e.y.resize(total);
  e.x.resize(total);
  e.scale.resize(total);
  std::vector<double> mag(static_cast<size_t>(c.hidden));
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t o = r * c.hidden;
    double sum = 0.0, mag_sum = 0.0;
    for (int64_t i = 0; i < c.hidden; ++i) {
      const double res = c.residual[o + i];
      const double sub = c.use_sublayer ? c.sublayer[o + i] : 0.0;
      const double b = c.use_bias ? c.bias[i] : 0.0;
      e.x[o + i] = res + sub + b;
      mag[i] = std::fabs(res) + std::fabs(sub) + std::fabs(b);
      sum += e.x[o + i];
      mag_sum += mag[i];
    }
    const double mean = sum / c.hidden;
    double sq = 0.0;
    for (int64_t i = 0; i < c.hidden; ++i) sq += (e.x[o + i] - mean) * (e.x[o + i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / c.hidden + c.eps);
    const double mag_mean = mag_sum / c.hidden;
    for (int64_t i = 0; i < c.hidden; ++i) {
      const double xhat = (e.x[o + i] - mean) * rstd;
      e.y[o + i] = c.gamma[i] * xhat + c.beta[i];
      e.scale[o + i] =
          std::fabs(c.gamma[i]) * ((mag[i] + mag_mean) * rstd + 1.0 + std::fabs(xhat)) +
          std::fabs(c.beta[i]);
    }
  }
  return e;
}

constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

}  // namespace engine::kernels::testing
