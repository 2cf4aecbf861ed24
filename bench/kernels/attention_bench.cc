// Multi-head self-attention core over a packed batch of equal-length
// sequences (12 heads of 64, BERT-base), on all OpenMP threads, one
// (sequence, head) pair per task as the engine ran it before: the project's
// attention kernels (scores, ScaledSoftmax, context, reading Q, K, V in
// place from the fused [tokens, 3H] buffer) against two dnnl_sgemm calls
// per pair with the same softmax. Arguments: sequence length, sequences.
//   bench_kernels --benchmark_filter=Attention --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <omp.h>

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
  AttentionProblem(int64_t length, int64_t sequences)
      : length(length),
        sequences(sequences),
        qkv(static_cast<size_t>(length * sequences * 3 * kHeads * kHeadSize)),
        context(static_cast<size_t>(length * sequences * kHeads * kHeadSize)),
        scores(static_cast<size_t>(omp_get_max_threads() * length * length)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (float& x : qkv) x = dist(rng);
  }
  int64_t length, sequences;
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
    float* scores = p.scores.data() + omp_get_thread_num() * len * len;
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
      kernels::AttentionRowsWithIsa(isa, args, 0, len, scale, scores);
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
  AttentionProblem p(state.range(0), state.range(1));
  Run(p, method, isa);
  for (auto _ : state) {
    Run(p, method, isa);
    benchmark::DoNotOptimize(p.context.data());
  }
  // Q K^T and P V: 2 * L^2 * d multiply-adds per (sequence, head).
  const double flops = 4.0 * static_cast<double>(p.length * p.length) * kHeadSize * kHeads *
                       static_cast<double>(p.sequences);
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void AttentionShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"L", "seqs"});
  b->Args({128, 8})->Args({128, 1})->Args({32, 8})->Args({16, 8})->Args({8, 8});
  b->Args({512, 1})->Args({2048, 1})->Args({8192, 1});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Attention, kernels, Method::kKernels, kernels::BestIsa())
    ->Apply(AttentionShapes);
BENCHMARK_CAPTURE(BM_Attention, sgemm, Method::kSgemm, kernels::BestIsa())->Apply(AttentionShapes);
BENCHMARK_CAPTURE(BM_Attention, kernels_scalar, Method::kKernels, kernels::Isa::kScalar)
    ->Args({128, 1})
    ->Args({32, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace engine::bench
