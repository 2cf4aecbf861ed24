// The int8 kernels of kernels.h written once against a vector type V
// (avx2::QVec, avx512::QVec) and instantiated in the source compiled for
// V's ISA. Include only from such a source. Every row is a few sweeps over
// data that stays in L1 (a row of up to 4096 floats is 16 KiB).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/vec_kernels.h"

namespace engine::kernels::vec {

// The u8 parameters of a row whose values lie in [lo, hi] (lo <= 0 <= hi).
// Plain float operations, the same as the scalar reference's. A template
// (V unused) so that each ISA's source gets its own copy, never another
// ISA's through the linker's choice of one inline definition.
struct QuantParams {
  float scale;
  float inv;
  int32_t zero;
};

template <typename V>
QuantParams QuantParamsFor(float lo, float hi) {
  const float range = hi - lo;
  if (!(range > 1e-30f)) return {1.0f, 1.0f, 0};  // All zeros (or NaN): q = 0.
  const float scale = range / 255.0f;
  const float inv = 1.0f / scale;
  float zero = __builtin_nearbyintf(-lo * inv);
  zero = zero < 0.0f ? 0.0f : (zero > 255.0f ? 255.0f : zero);
  return {scale, inv, static_cast<int32_t>(zero)};
}

// Tracks a row's minimum and maximum, starting from 0 (the range includes
// 0). Inactive tail lanes load as 0, so they never widen it.
template <typename V>
struct MinMax {
  typename V::Reg lo = V::Zero();
  typename V::Reg hi = V::Zero();
  void Add(typename V::Reg x) {
    lo = V::Min(lo, x);
    hi = V::Max(hi, x);
  }
  QuantParams Params() const { return QuantParamsFor<V>(V::ReduceMin(lo), V::ReduceMax(hi)); }
};

// q[0, n) from x[0, n) with the row's parameters.
template <typename V>
void QuantizeRowWith(const float* x, int64_t n, const QuantParams& p, uint8_t* q) {
  constexpr int64_t W = V::kWidth;
  const typename V::Reg inv = V::Set1(p.inv);
  int64_t i = 0;
  for (; i + W <= n; i += W) V::StoreU8(q + i, V::Load(x + i), inv, p.zero);
  if (i < n) V::StoreU8(q + i, V::Load(x + i, V::TailMask(n - i)), inv, p.zero, n - i);
}

// Quantizes x[0, n) into row `row` of `out` with the parameters of its
// tracked range, storing them beside the row; returns them.
template <typename V>
QuantParams QuantizeRowInto(const float* x, int64_t n, const MinMax<V>& mm,
                            const QuantizedRows& out, int64_t row) {
  const QuantParams p = mm.Params();
  QuantizeRowWith<V>(x, n, p, out.q + row * n);
  out.scale[row] = p.scale;
  out.zero[row] = p.zero;
  return p;
}

template <typename V>
void QuantizeRows(const float* x, int64_t cols, const QuantizedRows& out, int64_t begin,
                  int64_t end) {
  constexpr int64_t W = V::kWidth;
  for (int64_t row = begin; row < end; ++row) {
    const float* xr = x + row * cols;
    MinMax<V> mm;
    int64_t i = 0;
    for (; i + W <= cols; i += W) mm.Add(V::Load(xr + i));
    if (i < cols) mm.Add(V::Load(xr + i, V::TailMask(cols - i)));
    QuantizeRowInto<V>(xr, cols, mm, out, row);
  }
}

// Dequantizes one row of an accumulator: element i of
// (acc - zero * col_sum) * row_scale * col_scale + bias, and with
// kTwoLevel the residual part's (acc' - zero' * col_sum) * row_scale' added
// before the column scale (kernels.h).
template <typename V, bool kTwoLevel = false>
struct RowDequantizer {
  using Reg = typename V::Reg;
  const int32_t* acc;
  const int32_t* col_sum;
  const float* col_scale;
  const float* bias;
  int32_t zero;
  Reg row_scale;
  const int32_t* residual_acc = nullptr;
  int32_t residual_zero = 0;
  Reg residual_scale = V::Zero();

  RowDequantizer(const Int8Accumulator& a, int64_t row, int64_t cols)
      : acc(a.acc + row * cols),
        col_sum(a.col_sum),
        col_scale(a.col_scale),
        bias(a.bias),
        zero(a.row_zero[row]),
        row_scale(V::Set1(a.row_scale[row])) {
    if constexpr (kTwoLevel) {
      residual_acc = a.residual_acc + row * cols;
      residual_zero = a.residual_row_zero[row];
      residual_scale = V::Set1(a.residual_row_scale[row]);
    }
  }

  Reg At(int64_t i) const {
    if constexpr (kTwoLevel) {
      const Reg sum =
          V::Fma(V::LoadCentered(residual_acc + i, col_sum + i, residual_zero), residual_scale,
                 V::Mul(V::LoadCentered(acc + i, col_sum + i, zero), row_scale));
      return V::Fma(sum, V::Load(col_scale + i), V::Load(bias + i));
    }
    const Reg s = V::Mul(row_scale, V::Load(col_scale + i));
    return V::Fma(V::LoadCentered(acc + i, col_sum + i, zero), s, V::Load(bias + i));
  }
  Reg At(int64_t i, typename V::Mask m) const {
    if constexpr (kTwoLevel) {
      const Reg sum =
          V::Fma(V::LoadCentered(residual_acc + i, col_sum + i, residual_zero, m), residual_scale,
                 V::Mul(V::LoadCentered(acc + i, col_sum + i, zero, m), row_scale));
      return V::Fma(sum, V::Load(col_scale + i, m), V::Load(bias + i, m));
    }
    const Reg s = V::Mul(row_scale, V::Load(col_scale + i, m));
    return V::Fma(V::LoadCentered(acc + i, col_sum + i, zero, m), s, V::Load(bias + i, m));
  }
};

template <typename V, bool kTwoLevel>
void DequantizeRowRange(const Int8Accumulator& in, int64_t cols, float* out, int64_t begin,
                        int64_t end) {
  constexpr int64_t W = V::kWidth;
  for (int64_t row = begin; row < end; ++row) {
    const RowDequantizer<V, kTwoLevel> d(in, row, cols);
    float* o = out + row * cols;
    int64_t i = 0;
    for (; i + W <= cols; i += W) V::Store(o + i, d.At(i));
    if (i < cols) {
      const typename V::Mask m = V::TailMask(cols - i);
      V::Store(o + i, d.At(i, m), m);
    }
  }
}

template <typename V>
void DequantizeRows(const Int8Accumulator& in, int64_t cols, float* out, int64_t begin,
                    int64_t end) {
  if (in.residual_acc != nullptr) {
    DequantizeRowRange<V, true>(in, cols, out, begin, end);
  } else {
    DequantizeRowRange<V, false>(in, cols, out, begin, end);
  }
}

// The second level of a two-level row (kernels.h): x[0, n) (overwritten)
// becomes its residual x - (q - p.zero) * p.scale against the first level
// q, which is quantized into row `row` of `residual`. Multiply, then
// subtract (no fused multiply-add), as the scalar reference does.
template <typename V>
void QuantizeResidualRow(float* x, int64_t n, const uint8_t* q, const QuantParams& p,
                         const QuantizedRows& residual, int64_t row) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  const Reg scale = V::Set1(p.scale);
  const Reg zero = V::Set1(static_cast<float>(p.zero));
  MinMax<V> mm;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const Reg r = V::Sub(V::Load(x + i), V::Mul(V::Sub(V::LoadU8(q + i), zero), scale));
    V::Store(x + i, r);
    mm.Add(r);
  }
  if (i < n) {
    const typename V::Mask m = V::TailMask(n - i);
    const Reg r = V::KeepActive(
        V::Sub(V::Load(x + i, m), V::Mul(V::Sub(V::LoadU8(q + i, n - i), zero), scale)), m);
    V::Store(x + i, r, m);
    mm.Add(r);
  }
  QuantizeRowInto<V>(x, n, mm, residual, row);
}

// GELU, erf form: x * (1 + erf(z)) / 2, z = x / sqrt 2, with
// erf(z) = z P(z^2) / Q(z^2) on z clamped to [-4, 4] (erf(4) = 1 - 1.5e-8),
// a rational fit of degrees 5 and 5 (bench/engine/fit_erf.py: 2e-8 in
// double, 4.5e-7 evaluated in float; the GELU within 2e-7 |x| absolute and
// 1e-6 relative, ActivateKernelTest). Q >= 1 on the range, so the
// reciprocal's estimate and one Newton step serve for the division. No exp
// and no branch: about 20 instructions against about 30 for A&S 7.1.26's
// form with its exp, and the FFN's GELU is a full sweep over its widest
// activations.
template <typename V>
inline __attribute__((always_inline)) typename V::Reg GeluErf(typename V::Reg x) {
  using Reg = typename V::Reg;
  const Reg z =
      V::Max(V::Min(V::Mul(x, V::Set1(0.70710678118654752f)), V::Set1(4.0f)), V::Set1(-4.0f));
  const Reg t = V::Mul(z, z);
  const Reg p =
      Horner<V>(t, {1.9746599254077957e-06f, 2.880147289065875e-04f, 4.003269378698699e-03f,
                    5.3466354878140714e-02f, 1.9624271989730935e-01f, 1.1283789774137973f});
  const Reg q =
      Horner<V>(t, {3.747765167923939e-05f, 1.2162322379473236e-03f, 1.544372009007909e-02f,
                    1.1647355920816797e-01f, 5.072467502791265e-01f, 1.0f});
  // Clamped to [-1, 1]: an overshoot past -1 would turn the tiny negative
  // tail positive.
  const Reg erf =
      V::Max(V::Min(V::Mul(V::Mul(z, p), V::Reciprocal(q)), V::Set1(1.0f)), V::Set1(-1.0f));
  const Reg half = V::Mul(x, V::Set1(0.5f));
  // Past the clamp 1 + erf stays at the fit's ~1e-7 while x grows: below
  // -4 sqrt 2 the result is 0 (the true value is under 5e-8 there).
  return V::Select(V::Less(x, V::Set1(-5.656854249f)), V::Zero(), V::Fma(half, erf, half));
}

// GELU, tanh form: x * (1 + tanh(u)) / 2 = x / (1 + e^(-2u)),
// u = sqrt(2 / pi) * (x + 0.044715 x^3). Exp saturates for large |u|, where
// the quotient goes to 0 or x as it should.
template <typename V>
typename V::Reg GeluTanh(typename V::Reg x) {
  using Reg = typename V::Reg;
  const Reg x3 = V::Mul(V::Mul(x, x), x);
  const Reg u = V::Mul(V::Fma(x3, V::Set1(0.044715f), x), V::Set1(0.7978845608028654f));
  const Reg e = Exp<V>(V::Mul(u, V::Set1(-2.0f)));
  return V::Div(x, V::Add(V::Set1(1.0f), e));
}

template <typename V, Eltwise kAct>
typename V::Reg Activate(typename V::Reg x) {
  if constexpr (kAct == Eltwise::kGeluErf) return GeluErf<V>(x);
  if constexpr (kAct == Eltwise::kGeluTanh) return GeluTanh<V>(x);
  if constexpr (kAct == Eltwise::kRelu) return V::Max(x, V::Zero());
  if constexpr (kAct == Eltwise::kSilu) {
    return V::Div(x, V::Add(V::Set1(1.0f), Exp<V>(V::Sub(V::Zero(), x))));
  }
  return x;
}

// Calls fn(std::integral_constant<Eltwise, act>()) for the run-time `act`.
template <typename Fn>
void ForEltwise(Eltwise act, const Fn& fn) {
  switch (act) {
    case Eltwise::kGeluErf:
      return fn(std::integral_constant<Eltwise, Eltwise::kGeluErf>());
    case Eltwise::kGeluTanh:
      return fn(std::integral_constant<Eltwise, Eltwise::kGeluTanh>());
    case Eltwise::kRelu:
      return fn(std::integral_constant<Eltwise, Eltwise::kRelu>());
    case Eltwise::kSilu:
      return fn(std::integral_constant<Eltwise, Eltwise::kSilu>());
    case Eltwise::kNone:
      break;
  }
  fn(std::integral_constant<Eltwise, Eltwise::kNone>());
}

// Rows [begin, end) of the [*, cols] matrix x activated in place (the rows
// are contiguous, so one sweep over their floats).
template <typename V>
void ActivateRows(float* x, int64_t cols, Eltwise act, int64_t begin, int64_t end) {
  constexpr int64_t W = V::kWidth;
  float* p = x + begin * cols;
  const int64_t n = (end - begin) * cols;
  ForEltwise(act, [&](auto kind) {
    constexpr Eltwise kAct = decltype(kind)::value;
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {  // two independent chains per step
      const typename V::Reg a = Activate<V, kAct>(V::Load(p + i));
      const typename V::Reg b = Activate<V, kAct>(V::Load(p + i + W));
      V::Store(p + i, a);
      V::Store(p + i + W, b);
    }
    if (i + W <= n) {
      V::Store(p + i, Activate<V, kAct>(V::Load(p + i)));
      i += W;
    }
    if (i < n) {
      const typename V::Mask m = V::TailMask(n - i);
      V::Store(p + i, Activate<V, kAct>(V::Load(p + i, m)), m);
    }
  });
}

template <typename V, Eltwise kAct>
void GatedActivationRange(const float* x, int64_t cols, float* out, int64_t begin, int64_t end) {
  constexpr int64_t W = V::kWidth;
  for (int64_t row = begin; row < end; ++row) {
    const float* gate = x + row * 2 * cols;
    const float* up = gate + cols;
    float* o = out + row * cols;
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      V::Store(o + i, V::Mul(Activate<V, kAct>(V::Load(gate + i)), V::Load(up + i)));
    }
    if (i < cols) {
      const typename V::Mask m = V::TailMask(cols - i);
      V::Store(o + i, V::Mul(Activate<V, kAct>(V::Load(gate + i, m)), V::Load(up + i, m)), m);
    }
  }
}

template <typename V>
void GatedActivationRows(const float* x, int64_t cols, Eltwise act, float* out, int64_t begin,
                         int64_t end) {
  ForEltwise(act, [&](auto kind) {
    GatedActivationRange<V, decltype(kind)::value>(x, cols, out, begin, end);
  });
}

// The FFN's inner epilogues in one sweep per row: the row of `in` (in_cols
// int32 values) dequantized, mapped to `cols` floats by value(d, i) and
// value(d, i, mask) (d: the row's RowDequantizer), staged in place of the
// row's int32 values, and quantized into `out` (and its second level into
// `residual` when residual.q is set). Each staged vector is written after
// every accumulator value it depends on was read (value(d, i) reads index
// i, or i and cols + i of a gated row).
template <typename V, typename Value>
void DequantizeMapQuantizeRows(const Int8Accumulator& in, int64_t in_cols, int64_t cols,
                               const QuantizedRows& out, const QuantizedRows& residual,
                               int64_t begin, int64_t end, const Value& value) {
  constexpr int64_t W = V::kWidth;
  for (int64_t row = begin; row < end; ++row) {
    const RowDequantizer<V> d(in, row, in_cols);  // Reads the row's input scale first.
    float* staged = reinterpret_cast<float*>(const_cast<int32_t*>(in.acc + row * in_cols));
    MinMax<V> mm;
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      const typename V::Reg y = value(d, i);
      V::Store(staged + i, y);
      mm.Add(y);
    }
    if (i < cols) {
      const typename V::Mask m = V::TailMask(cols - i);
      const typename V::Reg y = V::KeepActive(value(d, i, m), m);
      V::Store(staged + i, y, m);
      mm.Add(y);
    }
    const QuantParams p = QuantizeRowInto<V>(staged, cols, mm, out, row);
    if (residual.q != nullptr) {
      QuantizeResidualRow<V>(staged, cols, out.q + row * cols, p, residual, row);
    }
  }
}

template <typename V>
void DequantizeGateQuantizeRows(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                const QuantizedRows& out, const QuantizedRows& residual,
                                int64_t begin, int64_t end) {
  // The accumulator row holds 2 * cols values, the activated half first.
  ForEltwise(act, [&](auto kind) {
    constexpr Eltwise kAct = decltype(kind)::value;
    DequantizeMapQuantizeRows<V>(in, 2 * cols, cols, out, residual, begin, end,
                                 [&](const RowDequantizer<V>& d, int64_t i, auto... mask) {
                                   return V::Mul(Activate<V, kAct>(d.At(i, mask...)),
                                                 d.At(cols + i, mask...));
                                 });
  });
}

template <typename V>
void DequantizeActivateQuantizeRows(const Int8Accumulator& in, int64_t cols, Eltwise act,
                                    const QuantizedRows& out, int64_t begin, int64_t end) {
  ForEltwise(act, [&](auto kind) {
    constexpr Eltwise kAct = decltype(kind)::value;
    DequantizeMapQuantizeRows<V>(in, cols, cols, out, QuantizedRows{}, begin, end,
                                 [&](const RowDequantizer<V>& d, int64_t i, auto... mask) {
                                   return Activate<V, kAct>(d.At(i, mask...));
                                 });
  });
}

// One row of Add & Norm over an int8 sublayer, the passes of
// AddLayerNormRow (vec_kernels.h) plus a fourth that quantizes the output:
// 1. x = residual (+ dequantized sublayer + bias) into xbuf, summed;
// 2. centred squares from xbuf; 3. out = LN(x), its min and max tracked;
// 4. out quantized (when q is set).
template <typename V, bool kSub, bool kTwoLevel = false>
void AddLayerNormInt8Row(const AddLayerNormInt8Args& a, int64_t row, float* xbuf, float* out) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  const int64_t n = a.hidden;
  const float* r = a.residual + row * n;
  const int64_t tail = n % W;
  const int64_t body = n - tail;
  const typename V::Mask m = V::TailMask(tail);

  Reg a0 = V::Zero(), a1 = V::Zero();
  if constexpr (kSub) {
    const RowDequantizer<V, kTwoLevel> d(a.sublayer, row, n);
    int64_t i = 0;
    for (; i + 2 * W <= body; i += 2 * W) {
      const Reg x0 = V::Add(V::Load(r + i), d.At(i));
      const Reg x1 = V::Add(V::Load(r + i + W), d.At(i + W));
      V::Store(xbuf + i, x0);
      V::Store(xbuf + i + W, x1);
      a0 = V::Add(a0, x0);
      a1 = V::Add(a1, x1);
    }
    for (; i < body; i += W) {
      const Reg x = V::Add(V::Load(r + i), d.At(i));
      V::Store(xbuf + i, x);
      a0 = V::Add(a0, x);
    }
    if (tail > 0) {
      const Reg x = V::KeepActive(V::Add(V::Load(r + body, m), d.At(body, m)), m);
      V::Store(xbuf + body, x, m);
      a1 = V::Add(a1, x);
    }
  } else {
    for (int64_t i = 0; i < body; i += W) {
      const Reg x = V::Load(r + i);
      V::Store(xbuf + i, x);
      a0 = V::Add(a0, x);
    }
    if (tail > 0) {
      const Reg x = V::Load(r + body, m);
      V::Store(xbuf + body, x, m);
      a1 = V::Add(a1, x);
    }
  }
  const float mean = a.rms ? 0.0f : V::ReduceAdd(V::Add(a0, a1)) / n;
  const Reg vmean = V::Set1(mean);

  a0 = a1 = V::Zero();
  int64_t i = 0;
  for (; i + 2 * W <= body; i += 2 * W) {
    const Reg d0 = V::Sub(V::Load(xbuf + i), vmean);
    const Reg d1 = V::Sub(V::Load(xbuf + i + W), vmean);
    a0 = V::Fma(d0, d0, a0);
    a1 = V::Fma(d1, d1, a1);
  }
  for (; i < body; i += W) {
    const Reg dv = V::Sub(V::Load(xbuf + i), vmean);
    a0 = V::Fma(dv, dv, a0);
  }
  if (tail > 0) {
    const Reg dv = V::KeepActive(V::Sub(V::Load(xbuf + body, m), vmean), m);
    a1 = V::Fma(dv, dv, a1);
  }
  const float var = V::ReduceAdd(V::Add(a0, a1)) / n;
  const Reg rstd = V::Set1(1.0f / __builtin_sqrtf(var + a.eps));

  MinMax<V> mm;
  for (i = 0; i < body; i += W) {
    const Reg xhat = V::Mul(V::Sub(V::Load(xbuf + i), vmean), rstd);
    const Reg y = V::Fma(xhat, V::Load(a.gamma + i), V::Load(a.beta + i));
    V::Store(out + i, y);
    mm.Add(y);
  }
  if (tail > 0) {
    const Reg xhat = V::Mul(V::Sub(V::Load(xbuf + body, m), vmean), rstd);
    const Reg y =
        V::KeepActive(V::Fma(xhat, V::Load(a.gamma + body, m), V::Load(a.beta + body, m)), m);
    V::Store(out + body, y, m);
    mm.Add(y);
  }
  if (a.quantized.q != nullptr) {
    QuantizeRowInto<V>(out, n, mm, a.quantized, row);
  }
}

template <typename V>
void AddLayerNormInt8Rows(const AddLayerNormInt8Args& a, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    float* out = a.out + row * a.hidden;
    // As in AddLayerNormRowRange: x is kept where it must be kept anyway.
    float* xbuf = a.residual_out != nullptr ? a.residual_out + row * a.hidden : out;
    if (a.sublayer.residual_acc != nullptr) {
      AddLayerNormInt8Row<V, true, true>(a, row, xbuf, out);
    } else if (a.sublayer.acc != nullptr) {
      AddLayerNormInt8Row<V, true>(a, row, xbuf, out);
    } else {
      AddLayerNormInt8Row<V, false>(a, row, xbuf, out);
    }
  }
}

}  // namespace engine::kernels::vec
