// Fused Add & Norm against the unfused oneDNN path (binary add, then layer
// normalization), and each ISA single-threaded. Bytes processed count the
// fused kernel's memory floor for both, so GB/s compare directly:
// read residual and sublayer, write out.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>

#include "dnnl_add_layer_norm.h"
#include "kernels/kernels.h"

namespace engine::bench {
namespace {

using kernels::Isa;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer Random(int64_t n, uint32_t seed) {
  // 64-byte aligned (cache line) for both peers.
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  Buffer b(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < n; ++i) b[i] = dist(rng);
  return b;
}

struct Problem {
  Problem(int64_t rows, int64_t hidden)
      : rows(rows),
        hidden(hidden),
        residual(Random(rows * hidden, 1)),
        sublayer(Random(rows * hidden, 2)),
        sum(Random(rows * hidden, 3)),
        out(Random(rows * hidden, 4)),
        gamma(Random(hidden, 5)),
        beta(Random(hidden, 6)) {}

  kernels::AddLayerNormArgs Args() const {
    kernels::AddLayerNormArgs a;
    a.residual = residual.get();
    a.sublayer = sublayer.get();
    a.gamma = gamma.get();
    a.beta = beta.get();
    a.rows = rows;
    a.hidden = hidden;
    a.out = out.get();
    return a;
  }

  int64_t rows, hidden;
  Buffer residual, sublayer, sum, out, gamma, beta;
};

void SetBytes(benchmark::State& state, const Problem& p) {
  state.SetBytesProcessed(state.iterations() * p.rows * p.hidden * 3 *
                          static_cast<int64_t>(sizeof(float)));
}

void BM_FusedAddLayerNorm(benchmark::State& state) {
  Problem p(state.range(0), state.range(1));
  const kernels::AddLayerNormArgs args = p.Args();
  for (auto _ : state) {
    kernels::AddLayerNorm(args);
    benchmark::ClobberMemory();
  }
  SetBytes(state, p);
  state.SetLabel(kernels::IsaName(kernels::BestIsa()));
}

void BM_UnfusedDnnlAddLayerNorm(benchmark::State& state) {
  Problem p(state.range(0), state.range(1));
  DnnlAddLayerNorm dnnl(p.rows, p.hidden, 1e-12f, p.gamma.get(), p.beta.get(), p.residual.get(),
                        p.sublayer.get(), p.sum.get(), p.out.get());
  for (auto _ : state) {
    dnnl.Run();
    benchmark::ClobberMemory();
  }
  SetBytes(state, p);
}

void BM_FusedAddLayerNormSingleThread(benchmark::State& state, Isa isa) {
  if (!kernels::IsaSupported(isa)) {
    state.SkipWithError("ISA not supported by this CPU");
    return;
  }
  Problem p(state.range(0), state.range(1));
  const kernels::AddLayerNormArgs args = p.Args();
  for (auto _ : state) {
    kernels::AddLayerNormWithIsa(isa, args);
    benchmark::ClobberMemory();
  }
  SetBytes(state, p);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 768})->Args({8192, 384})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK(BM_FusedAddLayerNorm)->Apply(Shapes);
BENCHMARK(BM_UnfusedDnnlAddLayerNorm)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_FusedAddLayerNormSingleThread, scalar, Isa::kScalar)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_FusedAddLayerNormSingleThread, avx2, Isa::kAvx2)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_FusedAddLayerNormSingleThread, avx512, Isa::kAvx512)->Apply(Shapes);

}  // namespace
}  // namespace engine::bench

BENCHMARK_MAIN();
