// Kernels written once against a vector type V (avx2::Vec, avx512::Vec) and
// instantiated in the source compiled for V's ISA. Include only from such a
// source. Rows end with a masked tail, so any length works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/kernels.h"

namespace engine::kernels::vec {

// c[0] t^(N-1) + c[1] t^(N-2) + ... + c[N-1] by Horner's rule (highest
// coefficient first, one fused multiply-add per step).
template <typename V, size_t N>
inline __attribute__((always_inline)) typename V::Reg Horner(typename V::Reg t,
                                                             const float (&c)[N]) {
  typename V::Reg p = V::Set1(c[0]);
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = V::Fma(p, t, V::Set1(c[i]));
  return p;
}

// e^x to about 1 ulp (Cephes expf: range reduction by ln2 split in two
// constants, degree-6 polynomial). Inputs below V::kExpLowest give +0 (AVX2
// flushes the subnormal range, AVX-512's scalef computes it); inputs above
// ln(FLT_MAX) saturate there. kNonPositive: the caller guarantees x <= 0
// (the softmax's shifted scores, up to an ulp), so only the lower bound is
// clamped.
template <typename V, bool kNonPositive = false>
typename V::Reg Exp(typename V::Reg x) {
  x = V::Max(x, V::Set1(V::kExpLowest));
  if constexpr (!kNonPositive) x = V::Min(x, V::Set1(88.3762626647949f));
  const typename V::Reg n = V::Round(V::Mul(x, V::Set1(1.44269504088896341f)));
  // n * 0.693359375 is exact (few mantissa bits), so r keeps its low bits.
  typename V::Reg r = V::Fma(n, V::Set1(-0.693359375f), x);
  r = V::Fma(n, V::Set1(2.12194440e-4f), r);
  const typename V::Reg p = Horner<V>(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                          4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
  // e^r = 1 + r + r^2 * p(r)
  const typename V::Reg er = V::Add(V::Fma(V::Mul(p, r), r, r), V::Set1(1.0f));
  return V::MulPow2(er, n);
}

// residual + sublayer + bias at i, in the reference's addition order so the
// pre-LN residual_out matches it bit for bit.
template <typename V, bool kSub, bool kBias>
typename V::Reg LoadSum(const float* r, const float* s, const float* b, int64_t i) {
  typename V::Reg x = V::Load(r + i);
  if constexpr (kSub) x = V::Add(x, V::Load(s + i));
  if constexpr (kBias) x = V::Add(x, V::Load(b + i));
  return x;
}

template <typename V, bool kSub, bool kBias>
typename V::Reg LoadSum(const float* r, const float* s, const float* b, int64_t i,
                        typename V::Mask m) {
  typename V::Reg x = V::Load(r + i, m);
  if constexpr (kSub) x = V::Add(x, V::Load(s + i, m));
  if constexpr (kBias) x = V::Add(x, V::Load(b + i, m));
  return x;
}

// One row: pass 1 streams the inputs from memory, writes x to `xbuf` (the
// row of residual_out or out) and sums it; passes 2 and 3 re-read x from
// L1. Two-pass variance (centred squares) avoids the cancellation of
// E[x^2] - E[x]^2. Four accumulators of W lanes hide the add latency and
// split each sum into 4 * W short float chains, which keeps the mean within
// about an ulp of exact for rows of thousands (the tests check 4096).
template <typename V, bool kSub, bool kBias>
void AddLayerNormRow(const float* r, const float* s, const float* b, const float* gamma,
                     const float* beta, float eps, bool rms, int64_t n, float* xbuf, float* out) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  Reg a0 = V::Zero(), a1 = V::Zero(), a2 = V::Zero(), a3 = V::Zero();
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    const Reg x0 = LoadSum<V, kSub, kBias>(r, s, b, i);
    const Reg x1 = LoadSum<V, kSub, kBias>(r, s, b, i + W);
    const Reg x2 = LoadSum<V, kSub, kBias>(r, s, b, i + 2 * W);
    const Reg x3 = LoadSum<V, kSub, kBias>(r, s, b, i + 3 * W);
    V::Store(xbuf + i, x0);
    V::Store(xbuf + i + W, x1);
    V::Store(xbuf + i + 2 * W, x2);
    V::Store(xbuf + i + 3 * W, x3);
    a0 = V::Add(a0, x0);
    a1 = V::Add(a1, x1);
    a2 = V::Add(a2, x2);
    a3 = V::Add(a3, x3);
  }
  for (; i + W <= n; i += W) {
    const Reg x = LoadSum<V, kSub, kBias>(r, s, b, i);
    V::Store(xbuf + i, x);
    a0 = V::Add(a0, x);
  }
  const int64_t tail = n - i;
  const typename V::Mask m = V::TailMask(tail);
  if (tail > 0) {
    const Reg x = LoadSum<V, kSub, kBias>(r, s, b, i, m);  // Inactive lanes are 0.
    V::Store(xbuf + i, x, m);
    a1 = V::Add(a1, x);
  }
  // RMSNorm: the same sweep about 0.
  const float mean = rms ? 0.0f : V::ReduceAdd(V::Add(V::Add(a0, a1), V::Add(a2, a3))) / n;

  const Reg vmean = V::Set1(mean);
  a0 = a1 = a2 = a3 = V::Zero();
  i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    const Reg d0 = V::Sub(V::Load(xbuf + i), vmean);
    const Reg d1 = V::Sub(V::Load(xbuf + i + W), vmean);
    const Reg d2 = V::Sub(V::Load(xbuf + i + 2 * W), vmean);
    const Reg d3 = V::Sub(V::Load(xbuf + i + 3 * W), vmean);
    a0 = V::Fma(d0, d0, a0);
    a1 = V::Fma(d1, d1, a1);
    a2 = V::Fma(d2, d2, a2);
    a3 = V::Fma(d3, d3, a3);
  }
  for (; i + W <= n; i += W) {
    const Reg d = V::Sub(V::Load(xbuf + i), vmean);
    a0 = V::Fma(d, d, a0);
  }
  if (tail > 0) {
    const Reg d = V::KeepActive(V::Sub(V::Load(xbuf + i, m), vmean), m);
    a1 = V::Fma(d, d, a1);
  }
  const float var = V::ReduceAdd(V::Add(V::Add(a0, a1), V::Add(a2, a3))) / n;
  // The builtin, not std::sqrt: no inline library symbol compiled for this ISA
  // that the linker could hand to portable code.
  const Reg rstd = V::Set1(1.0f / __builtin_sqrtf(var + eps));

  // (x - mean) first: exact for x near the mean, unlike x * rstd - mean * rstd.
  for (i = 0; i + W <= n; i += W) {
    const Reg xhat = V::Mul(V::Sub(V::Load(xbuf + i), vmean), rstd);
    V::Store(out + i, V::Fma(xhat, V::Load(gamma + i), V::Load(beta + i)));
  }
  if (tail > 0) {
    const Reg xhat = V::Mul(V::Sub(V::Load(xbuf + i, m), vmean), rstd);
    V::Store(out + i, V::Fma(xhat, V::Load(gamma + i, m), V::Load(beta + i, m)), m);
  }
}

template <typename V, bool kSub, bool kBias>
void AddLayerNormRowRange(const AddLayerNormArgs& a, int64_t begin, int64_t end) {
  const int64_t h = a.hidden;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t o = row * h;
    float* out = a.out + o;
    // x goes where it must be kept anyway; out may alias residual, which
    // is safe because each element is read before it is overwritten.
    float* xbuf = a.residual_out != nullptr ? a.residual_out + o : out;
    AddLayerNormRow<V, kSub, kBias>(a.residual + o, kSub ? a.sublayer + o : nullptr, a.bias,
                                    a.gamma, a.beta, a.eps, a.rms, h, xbuf, out);
  }
}

template <typename V>
void AddLayerNormRows(const AddLayerNormArgs& a, int64_t begin, int64_t end) {
  if (a.sublayer != nullptr) {
    if (a.bias != nullptr) {
      AddLayerNormRowRange<V, true, true>(a, begin, end);
    } else {
      AddLayerNormRowRange<V, true, false>(a, begin, end);
    }
  } else if (a.bias != nullptr) {
    AddLayerNormRowRange<V, false, true>(a, begin, end);
  } else {
    AddLayerNormRowRange<V, false, false>(a, begin, end);
  }
}

// max over i < n of scale * x[i]. Inactive tail lanes are filled so that
// fill * scale is -inf (or 0 == scale * x when scale is 0), never the
// maximum; two accumulators, as max is exact in any order.
template <typename V>
float ScaledMax(const float* x, int64_t n, float scale) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Reg vscale = V::Set1(scale);
  const int64_t tail = n % W;
  const int64_t body = n - tail;
  Reg vmax0 = V::Set1(-kInf), vmax1 = V::Set1(-kInf);
  int64_t i = 0;
  for (; i + 2 * W <= body; i += 2 * W) {
    vmax0 = V::Max(vmax0, V::Mul(V::Load(x + i), vscale));
    vmax1 = V::Max(vmax1, V::Mul(V::Load(x + i + W), vscale));
  }
  if (i < body) vmax0 = V::Max(vmax0, V::Mul(V::Load(x + i), vscale));
  if (tail > 0) {
    const float fill = scale > 0.0f ? -kInf : (scale < 0.0f ? kInf : 0.0f);
    vmax1 = V::Max(vmax1, V::Mul(V::Load(x + body, V::TailMask(tail), V::Set1(fill)), vscale));
  }
  return V::ReduceMax(V::Max(vmax0, vmax1));
}

// x[i] = exp(scale * x[i] + neg_max) for i < n, in place; returns their
// sum. The fma keeps scale * x exact before the max is subtracted.
template <typename V>
float ExpShiftedInPlace(float* x, int64_t n, typename V::Reg vscale, typename V::Reg neg_max) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  const int64_t tail = n % W;
  const int64_t body = n - tail;
  Reg a0 = V::Zero(), a1 = V::Zero();
  int64_t i = 0;
  for (; i + 2 * W <= body; i += 2 * W) {
    const Reg e0 = Exp<V, true>(V::Fma(V::Load(x + i), vscale, neg_max));
    const Reg e1 = Exp<V, true>(V::Fma(V::Load(x + i + W), vscale, neg_max));
    V::Store(x + i, e0);
    V::Store(x + i + W, e1);
    a0 = V::Add(a0, e0);
    a1 = V::Add(a1, e1);
  }
  for (; i < body; i += W) {
    const Reg e = Exp<V, true>(V::Fma(V::Load(x + i), vscale, neg_max));
    V::Store(x + i, e);
    a0 = V::Add(a0, e);
  }
  if (tail > 0) {
    const typename V::Mask m = V::TailMask(tail);
    const Reg e = V::KeepActive(Exp<V, true>(V::Fma(V::Load(x + body, m), vscale, neg_max)), m);
    V::Store(x + body, e, m);
    a1 = V::Add(a1, e);
  }
  return V::ReduceAdd(V::Add(a0, a1));
}

// x = exp(scale * x - max) / sum, in place, three passes over an L1 row.
template <typename V>
void ScaledSoftmaxRow(float* x, int64_t n, float scale) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  const int64_t tail = n % W;
  const int64_t body = n - tail;
  const Reg neg_max = V::Set1(-ScaledMax<V>(x, n, scale));
  const Reg inv_sum = V::Set1(1.0f / ExpShiftedInPlace<V>(x, n, V::Set1(scale), neg_max));
  for (int64_t i = 0; i < body; i += W) V::Store(x + i, V::Mul(V::Load(x + i), inv_sum));
  if (tail > 0) {
    const typename V::Mask m = V::TailMask(tail);
    V::Store(x + body, V::Mul(V::Load(x + body, m), inv_sum), m);
  }
}

template <typename V>
void ScaledSoftmaxRows(float* x, int64_t begin, int64_t end, int64_t cols, float scale) {
  for (int64_t row = begin; row < end; ++row) ScaledSoftmaxRow<V>(x + row * cols, cols, scale);
}

}  // namespace engine::kernels::vec
