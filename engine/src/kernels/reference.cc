// Scalar kernels: the fallback for CPUs without AVX2 and the oracle the
// tests compare the vector kernels against. Plain loops in float (no
// double), with compensated sums so the statistics are as exact as float
// allows whatever the row length.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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

// out = gamma * (x - mean) / sqrt(var + eps) + beta for a row x whose sum
// is `sum` (the fp32 and int8 Add & Norm rows); out may be x.
void NormalizeRow(const float* x, int64_t n, float sum, const float* gamma, const float* beta,
                  float eps, float* out) {
  const float mean = sum / n;
  CompensatedSum squares;
  for (int64_t i = 0; i < n; ++i) {
    const float d = x[i] - mean;
    squares.Add(d * d);
  }
  const float rstd = 1.0f / std::sqrt(squares.value() / n + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = gamma[i] * ((x[i] - mean) * rstd) + beta[i];
}

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
  NormalizeRow(x, n, a.rms ? 0.0f : sum.value(), a.gamma, a.beta, a.eps, out);
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

// ---- int8 ----

// A row's u8 parameters for values in [lo, hi], lo <= 0 <= hi; the same
// float operations as vec::QuantParamsFor.
struct QuantParams {
  float scale;
  float inv;
  int32_t zero;
};

QuantParams QuantParamsFor(float lo, float hi) {
  const float range = hi - lo;
  if (!(range > 1e-30f)) return {1.0f, 1.0f, 0};
  const float scale = range / 255.0f;
  const float inv = 1.0f / scale;
  const float zero = std::clamp(std::nearbyint(-lo * inv), 0.0f, 255.0f);
  return {scale, inv, static_cast<int32_t>(zero)};
}

// Quantizes x[0, n) into row `row` of `out`.
void QuantizeRow(const float* x, int64_t n, const QuantizedRows& out, int64_t row) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const QuantParams p = QuantParamsFor(lo, hi);
  uint8_t* q = out.q + row * n;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = static_cast<int32_t>(std::nearbyint(x[i] * p.inv)) + p.zero;
    q[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
  }
  out.scale[row] = p.scale;
  out.zero[row] = p.zero;
}

// Element (row, i) of the dequantized accumulator plus bias (both parts of
// a two-level one).
float DequantizedAt(const Int8Accumulator& a, int64_t row, int64_t cols, int64_t i) {
  int32_t acc;
  std::memcpy(&acc, a.acc + row * cols + i, sizeof(acc));  // May hold staged floats later.
  const int32_t centered = acc - a.row_zero[row] * a.col_sum[i];
  if (a.residual_acc == nullptr) {
    return static_cast<float>(centered) * (a.row_scale[row] * a.col_scale[i]) + a.bias[i];
  }
  const int32_t residual = a.residual_acc[row * cols + i] - a.residual_row_zero[row] * a.col_sum[i];
  const float sum = static_cast<float>(centered) * a.row_scale[row] +
                    static_cast<float>(residual) * a.residual_row_scale[row];
  return sum * a.col_scale[i] + a.bias[i];
}

// Quantizes row `row` of `out` from `cols` floats staged as bytes (in place
// of an int32 accumulator row, so read through memcpy).
void QuantizeStaged(const unsigned char* staged, int64_t cols, const QuantizedRows& out,
                    int64_t row) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    float y;
    std::memcpy(&y, staged + i * sizeof(float), sizeof(y));
    lo = std::min(lo, y);
    hi = std::max(hi, y);
  }
  const QuantParams p = QuantParamsFor(lo, hi);
  uint8_t* q = out.q + row * cols;
  for (int64_t i = 0; i < cols; ++i) {
    float y;
    std::memcpy(&y, staged + i * sizeof(float), sizeof(y));
    q[i] = static_cast<uint8_t>(
        std::clamp(static_cast<int32_t>(std::nearbyint(y * p.inv)) + p.zero, 0, 255));
  }
  out.scale[row] = p.scale;
  out.zero[row] = p.zero;
}

// The second level of a two-level row (kernels.h): the `cols` staged
// floats become their residual against the first level, row `row` of
// `out`, quantized into `residual`.
void QuantizeStagedResidual(unsigned char* staged, int64_t cols, const QuantizedRows& out,
                            const QuantizedRows& residual, int64_t row) {
  const uint8_t* q = out.q + row * cols;
  const float scale = out.scale[row];
  const float zero = static_cast<float>(out.zero[row]);
  for (int64_t i = 0; i < cols; ++i) {
    float y;
    std::memcpy(&y, staged + i * sizeof(float), sizeof(y));
    const float r = y - (static_cast<float>(q[i]) - zero) * scale;
    std::memcpy(staged + i * sizeof(float), &r, sizeof(r));
  }
  QuantizeStaged(staged, cols, residual, row);
}

float Activate(Eltwise act, float x) {
  switch (act) {
    case Eltwise::kGeluErf:
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Eltwise::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case Eltwise::kRelu:
      return std::max(x, 0.0f);
    case Eltwise::kSilu:
      return x / (1.0f + std::exp(-x));
    case Eltwise::kNone:
      break;
  }
  return x;
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

template <>
void QuantizeRows<Isa::kScalar>(const float* x, int64_t cols, const QuantizedRows& out,
                                int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) QuantizeRow(x + row * cols, cols, out, row);
}

template <>
void DequantizeRows<Isa::kScalar>(const Int8Accumulator& in, int64_t cols, float* out,
                                  int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    for (int64_t i = 0; i < cols; ++i) out[row * cols + i] = DequantizedAt(in, row, cols, i);
  }
}

template <>
void DequantizeActivateQuantizeRows<Isa::kScalar>(const Int8Accumulator& in, int64_t cols,
                                                  Eltwise act, const QuantizedRows& out,
                                                  int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    // Staged in place of the accumulator row, as the vector kernels do.
    auto* staged = reinterpret_cast<unsigned char*>(const_cast<int32_t*>(in.acc + row * cols));
    for (int64_t i = 0; i < cols; ++i) {
      const float y = Activate(act, DequantizedAt(in, row, cols, i));
      std::memcpy(staged + i * sizeof(float), &y, sizeof(y));
    }
    QuantizeStaged(staged, cols, out, row);
  }
}

template <>
void AddLayerNormInt8Rows<Isa::kScalar>(const AddLayerNormInt8Args& a, int64_t begin, int64_t end) {
  const int64_t n = a.hidden;
  for (int64_t row = begin; row < end; ++row) {
    const float* r = a.residual + row * n;
    float* out = a.out + row * n;
    float* x = a.residual_out != nullptr ? a.residual_out + row * n : out;
    CompensatedSum sum;
    for (int64_t i = 0; i < n; ++i) {
      // Read everything of element i before x[i] (which may alias r[i]) is written.
      const float v =
          a.sublayer.acc != nullptr ? r[i] + DequantizedAt(a.sublayer, row, n, i) : r[i];
      x[i] = v;
      sum.Add(v);
    }
    NormalizeRow(x, n, a.rms ? 0.0f : sum.value(), a.gamma, a.beta, a.eps, out);
    if (a.quantized.q != nullptr) QuantizeRow(out, n, a.quantized, row);
  }
}

template <>
void ActivateRows<Isa::kScalar>(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end) {
  for (int64_t i = begin * cols; i < end * cols; ++i) x[i] = Activate(act, x[i]);
}

template <>
void GatedActivationRows<Isa::kScalar>(const float* x, int64_t cols, Eltwise act, float* out,
                                       int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const float* gate = x + row * 2 * cols;
    for (int64_t i = 0; i < cols; ++i) {
      out[row * cols + i] = Activate(act, gate[i]) * gate[cols + i];
    }
  }
}

template <>
void DequantizeGateQuantizeRows<Isa::kScalar>(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                              const QuantizedRows& out,
                                              const QuantizedRows& residual, int64_t begin,
                                              int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    // Staged over the row's first half, as the vector kernels do; element
    // i is written after both halves' values at i were read.
    auto* staged = reinterpret_cast<unsigned char*>(const_cast<int32_t*>(in.acc + row * 2 * cols));
    for (int64_t i = 0; i < cols; ++i) {
      const float y = Activate(act, DequantizedAt(in, row, 2 * cols, i)) *
                      DequantizedAt(in, row, 2 * cols, cols + i);
      std::memcpy(staged + i * sizeof(float), &y, sizeof(y));
    }
    QuantizeStaged(staged, cols, out, row);
    if (residual.q != nullptr) QuantizeStagedResidual(staged, cols, out, residual, row);
  }
}

}  // namespace engine::kernels::detail
