// Multi-head self-attention core over a packed batch of equal-length
// sequences (12 heads of 64, BERT-base), on all OpenMP threads, one
// (sequence, head) pair per task: the project's streaming attention
// (AttentionWithIsa: scores, online softmax and context per key block,
// reading Q, K, V in place from the fused [tokens, 3H] buffer, a fixed
// scratch per thread) against two dnnl_sgemm calls per pair with
// ScaledSoftmax over an L x L block in between. Arguments: sequence length,
// sequences, window (0: global; w: |i - j| <= w, kernels only).
//   bench_kernels --benchmark_filter=Attention --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/attention_kernels.h"
#include "kernels/kernels.h"
#include "oneapi/dnnl/dnnl.h"

namespace engine::bench {
namespace {

constexpr int kHeads = 12;
constexpr int kHeadSize = 64;

struct AttentionProblem {
  AttentionProblem(int64_t length, int64_t sequences, int64_t window, int64_t scores_per_thread)
      : length(length),
        sequences(sequences),
        window(window),
        qkv(static_cast<size_t>(length * sequences * 3 * kHeads * kHeadSize)),
        context(static_cast<size_t>(length * sequences * kHeads * kHeadSize)),
        scores(static_cast<size_t>(omp_get_max_threads() * scores_per_thread)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (float& x : qkv) x = dist(rng);
  }
  int64_t length, sequences, window;
  std::vector<float> qkv, context, scores;
};

enum class Method { kKernels, kSgemm };

void Run(AttentionProblem& p, Method method, kernels::Isa isa) {
  const int64_t hidden = kHeads * kHeadSize;
  const int64_t stride = 3 * hidden;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadSize));
  const int64_t len = p.length;
  const int64_t tasks = p.sequences * kHeads;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t begin = task / kHeads * len;
    const int64_t head = task % kHeads;
    const int64_t scores_per_thread =
        method == Method::kKernels ? kernels::kAttentionScratchFloats : len * len;
    float* scores = p.scores.data() + omp_get_thread_num() * scores_per_thread;
    const float* q = p.qkv.data() + begin * stride + head * kHeadSize;
    float* out = p.context.data() + begin * hidden + head * kHeadSize;
    if (method == Method::kKernels) {
      kernels::AttentionHeadArgs args;
      args.q = q;
      args.k = q + hidden;
      args.v = q + 2 * hidden;
      args.qkv_stride = stride;
      args.length = len;
      args.head_size = kHeadSize;
      args.context = out;
      args.context_stride = hidden;
      kernels::AttentionWithIsa(
          isa, args, 0, len, scale,
          p.window > 0 ? kernels::KeyBand::Window(p.window) : kernels::KeyBand::All(), scores);
    } else {
      dnnl_sgemm('N', 'T', len, len, kHeadSize, 1.0f, q, stride, q + hidden, stride, 0.0f, scores,
                 len);
      kernels::ScaledSoftmaxWithIsa(isa, scores, len, len, scale);
      dnnl_sgemm('N', 'N', len, kHeadSize, len, 1.0f, scores, len, q + 2 * hidden, stride, 0.0f,
                 out, hidden);
    }
  }
}

void BM_Attention(benchmark::State& state, Method method, kernels::Isa isa) {
  if (!kernels::IsaSupported(isa)) {
    state.SkipWithError("ISA not supported by this CPU");
    return;
  }
  const int64_t len = state.range(0);
  const int64_t window = state.range(2);
  if (method == Method::kSgemm && window > 0) {
    state.SkipWithError("sgemm has no window");
    return;
  }
  AttentionProblem p(len, state.range(1), window,
                     method == Method::kKernels ? kernels::kAttentionScratchFloats : len * len);
  Run(p, method, isa);
  for (auto _ : state) {
    Run(p, method, isa);
    benchmark::DoNotOptimize(p.context.data());
  }
  // Q K^T and P V: 2 * L * keys * d multiply-adds per (sequence, head),
  // counting only the keys each row sees.
  double keys = static_cast<double>(len) * len;
  if (window > 0) {
    keys = 0.0;
    for (int64_t i = 0; i < len; ++i) {
      keys +=
          static_cast<double>(std::min(len - 1, i + window) - std::max<int64_t>(0, i - window) + 1);
    }
  }
  const double flops = 4.0 * keys * kHeadSize * kHeads * static_cast<double>(p.sequences);
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void AttentionShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"L", "seqs", "window"});
  b->Args({128, 8, 0})->Args({128, 1, 0})->Args({32, 8, 0})->Args({16, 8, 0})->Args({8, 8, 0});
  b->Args({512, 1, 0})->Args({2048, 1, 0})->Args({8192, 1, 0});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// ModernBERT's local layers: a 128-token window (w = 64) over long inputs.
void WindowShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"L", "seqs", "window"});
  b->Args({2048, 1, 64})->Args({8192, 1, 64});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Attention, kernels, Method::kKernels, kernels::BestIsa())
    ->Apply(AttentionShapes);
BENCHMARK_CAPTURE(BM_Attention, kernels_window, Method::kKernels, kernels::BestIsa())
    ->Apply(WindowShapes);
BENCHMARK_CAPTURE(BM_Attention, sgemm, Method::kSgemm, kernels::BestIsa())->Apply(AttentionShapes);
BENCHMARK_CAPTURE(BM_Attention, kernels_scalar, Method::kKernels, kernels::Isa::kScalar)
    ->Args({128, 1, 0})
    ->Args({32, 8, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace engine::bench
