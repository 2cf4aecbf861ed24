// The dispatching entry points of kernels.h: pick the ISA's row kernel and
// split rows over OpenMP threads in contiguous blocks.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/bf16.h"
#include "kernels/isa_kernels.h"
#include "kernels/kernels.h"

namespace engine::kernels {
namespace {

// Below this many floats a fork/join (a few microseconds) costs more than
// it saves: 32K floats are about 3 us of single-threaded Add & Norm.
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

using AddLayerNormFn = void (*)(const AddLayerNormArgs&, int64_t, int64_t);
using SoftmaxFn = void (*)(float*, int64_t, int64_t, int64_t, float);

AddLayerNormFn AddLayerNormFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::AddLayerNormRows<Isa::kAvx512>;
    case Isa::kAvx2:
      return detail::AddLayerNormRows<Isa::kAvx2>;
    case Isa::kScalar:
      break;
  }
  return detail::AddLayerNormRows<Isa::kScalar>;
}

SoftmaxFn SoftmaxFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return detail::ScaledSoftmaxRows<Isa::kAvx512>;
    case Isa::kAvx2:
      return detail::ScaledSoftmaxRows<Isa::kAvx2>;
    case Isa::kScalar:
      break;
  }
  return detail::ScaledSoftmaxRows<Isa::kScalar>;
}

// Calls fn(begin, end) over [0, rows) in one contiguous block per thread
// (good for the hardware prefetcher), or inline when the work is small or
// we are already inside a parallel region.
template <typename Fn>
void ParallelRows(int64_t rows, int64_t cols, const Fn& fn) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t blocks =
      std::min<int64_t>(threads, std::max<int64_t>(1, rows * cols / kMinParallelElements));
  if (blocks <= 1) {
    fn(0, rows);
    return;
  }
  const int64_t block_rows = (rows + blocks - 1) / blocks;
#pragma omp parallel for num_threads(blocks) schedule(static, 1)
  for (int64_t b = 0; b < blocks; ++b) {
    fn(b * block_rows, std::min(rows, (b + 1) * block_rows));
  }
}

}  // namespace

void AddLayerNorm(const AddLayerNormArgs& args) {
  const AddLayerNormFn fn = AddLayerNormFor(BestIsa());
  ParallelRows(args.rows, args.hidden, [&](int64_t begin, int64_t end) { fn(args, begin, end); });
}

void AddLayerNormWithIsa(Isa isa, const AddLayerNormArgs& args) {
  AddLayerNormFor(isa)(args, 0, args.rows);
}

void ScaledSoftmax(float* x, int64_t rows, int64_t cols, float scale) {
  const SoftmaxFn fn = SoftmaxFor(BestIsa());
  ParallelRows(rows, cols, [&](int64_t begin, int64_t end) { fn(x, begin, end, cols, scale); });
}

void ScaledSoftmaxWithIsa(Isa isa, float* x, int64_t rows, int64_t cols, float scale) {
  SoftmaxFor(isa)(x, 0, rows, cols, scale);
}

void ConvertToBf16(const float* in, int64_t n, uint16_t* out) {
  // Chunks of 4K as "rows" so that ParallelRows splits them over threads.
  constexpr int64_t kChunk = 4096;
  ParallelRows((n + kChunk - 1) / kChunk, kChunk, [&](int64_t begin, int64_t end) {
    const int64_t last = std::min(n, end * kChunk);
    for (int64_t i = begin * kChunk; i < last; ++i) out[i] = FloatToBf16(in[i]);
  });
}

void Tanh(float* x, int64_t n) {
  // The pooler's few thousand values: libm's tanh is exact to an ulp and
  // not worth vectorizing.
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

namespace {

template <typename Fn>
auto ByIsa(Isa isa, Fn scalar, Fn avx2, Fn avx512) {
  switch (isa) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    case Isa::kScalar:
      break;
  }
  return scalar;
}

auto QuantizeFor(Isa isa) {
  return ByIsa(isa, detail::QuantizeRows<Isa::kScalar>, detail::QuantizeRows<Isa::kAvx2>,
               detail::QuantizeRows<Isa::kAvx512>);
}
auto DequantizeFor(Isa isa) {
  return ByIsa(isa, detail::DequantizeRows<Isa::kScalar>, detail::DequantizeRows<Isa::kAvx2>,
               detail::DequantizeRows<Isa::kAvx512>);
}
auto DequantizeActivateQuantizeFor(Isa isa) {
  return ByIsa(isa, detail::DequantizeActivateQuantizeRows<Isa::kScalar>,
               detail::DequantizeActivateQuantizeRows<Isa::kAvx2>,
               detail::DequantizeActivateQuantizeRows<Isa::kAvx512>);
}
auto ActivateFor(Isa isa) {
  return ByIsa(isa, detail::ActivateRows<Isa::kScalar>, detail::ActivateRows<Isa::kAvx2>,
               detail::ActivateRows<Isa::kAvx512>);
}
auto GatedActivationFor(Isa isa) {
  return ByIsa(isa, detail::GatedActivationRows<Isa::kScalar>,
               detail::GatedActivationRows<Isa::kAvx2>, detail::GatedActivationRows<Isa::kAvx512>);
}
auto DequantizeGateQuantizeFor(Isa isa) {
  return ByIsa(isa, detail::DequantizeGateQuantizeRows<Isa::kScalar>,
               detail::DequantizeGateQuantizeRows<Isa::kAvx2>,
               detail::DequantizeGateQuantizeRows<Isa::kAvx512>);
}
auto AddLayerNormInt8For(Isa isa) {
  return ByIsa(isa, detail::AddLayerNormInt8Rows<Isa::kScalar>,
               detail::AddLayerNormInt8Rows<Isa::kAvx2>,
               detail::AddLayerNormInt8Rows<Isa::kAvx512>);
}

}  // namespace

void QuantizeRows(const float* x, int64_t rows, int64_t cols, const QuantizedRows& out) {
  const auto fn = QuantizeFor(BestIsa());
  ParallelRows(rows, cols, [&](int64_t begin, int64_t end) { fn(x, cols, out, begin, end); });
}

void QuantizeRowsWithIsa(Isa isa, const float* x, int64_t rows, int64_t cols,
                         const QuantizedRows& out) {
  QuantizeFor(isa)(x, cols, out, 0, rows);
}

void Dequantize(const Int8Accumulator& in, int64_t rows, int64_t cols, float* out) {
  const auto fn = DequantizeFor(BestIsa());
  ParallelRows(rows, cols, [&](int64_t begin, int64_t end) { fn(in, cols, out, begin, end); });
}

void DequantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows, int64_t cols, float* out) {
  DequantizeFor(isa)(in, cols, out, 0, rows);
}

void DequantizeActivateQuantize(const Int8Accumulator& in, int64_t rows, int64_t cols, Eltwise act,
                                const QuantizedRows& out) {
  const auto fn = DequantizeActivateQuantizeFor(BestIsa());
  ParallelRows(rows, cols, [&](int64_t begin, int64_t end) { fn(in, cols, act, out, begin, end); });
}

void DequantizeActivateQuantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows,
                                       int64_t cols, Eltwise act, const QuantizedRows& out) {
  DequantizeActivateQuantizeFor(isa)(in, cols, act, out, 0, rows);
}

void AddLayerNormInt8(const AddLayerNormInt8Args& args) {
  const auto fn = AddLayerNormInt8For(BestIsa());
  ParallelRows(args.rows, args.hidden, [&](int64_t begin, int64_t end) { fn(args, begin, end); });
}

void AddLayerNormInt8WithIsa(Isa isa, const AddLayerNormInt8Args& args) {
  AddLayerNormInt8For(isa)(args, 0, args.rows);
}

void Activate(float* x, int64_t rows, int64_t cols, Eltwise act) {
  const auto fn = ActivateFor(BestIsa());
  ParallelRows(rows, cols, [&](int64_t begin, int64_t end) { fn(x, cols, act, begin, end); });
}

void ActivateWithIsa(Isa isa, float* x, int64_t rows, int64_t cols, Eltwise act) {
  ActivateFor(isa)(x, cols, act, 0, rows);
}

void GatedActivation(const float* x, int64_t rows, int64_t cols, Eltwise act, float* out) {
  const auto fn = GatedActivationFor(BestIsa());
  ParallelRows(rows, 2 * cols,
               [&](int64_t begin, int64_t end) { fn(x, cols, act, out, begin, end); });
}

void GatedActivationWithIsa(Isa isa, const float* x, int64_t rows, int64_t cols, Eltwise act,
                            float* out) {
  GatedActivationFor(isa)(x, cols, act, out, 0, rows);
}

void DequantizeGateQuantize(const Int8Accumulator& in, int64_t rows, int64_t cols, Eltwise act,
                            const QuantizedRows& out, const QuantizedRows& residual) {
  const auto fn = DequantizeGateQuantizeFor(BestIsa());
  ParallelRows(rows, 2 * cols,
               [&](int64_t begin, int64_t end) { fn(in, cols, act, out, residual, begin, end); });
}

void DequantizeGateQuantizeWithIsa(Isa isa, const Int8Accumulator& in, int64_t rows, int64_t cols,
                                   Eltwise act, const QuantizedRows& out,
                                   const QuantizedRows& residual) {
  DequantizeGateQuantizeFor(isa)(in, cols, act, out, residual, 0, rows);
}

namespace {

// One head of head_size floats, in place; float sums of squares (head
// sizes are 64-256: well within float's accuracy for an RMS).
void RmsNormHead(float* x, int64_t n, const float* gamma, float eps) {
  float squares = 0.0f;
  for (int64_t i = 0; i < n; ++i) squares += x[i] * x[i];
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * rstd * gamma[i];
}

}  // namespace

void RmsNormHeads(const RmsNormHeadsArgs& a) {
  const int64_t d = a.head_size;
  ParallelRows(a.rows, (a.q_heads + a.k_heads) * d, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      float* x = a.x + row * a.stride;
      for (int64_t h = 0; h < a.q_heads; ++h) RmsNormHead(x + h * d, d, a.q_gamma, a.eps);
      x += a.q_heads * d;
      for (int64_t h = 0; h < a.k_heads; ++h) RmsNormHead(x + h * d, d, a.k_gamma, a.eps);
    }
  });
}

}  // namespace engine::kernels
