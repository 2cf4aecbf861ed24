// Encoder throughput at the shapes users run: BERT-base and MiniLM-L6, fp32,
// the engine's default threads (the CPUs the process may use) and OpenMP
// wait policy (passive unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set).
// Models have random weights (speed does not depend on values) and are
// written once per shape into a temporary directory.
//   bench_encoder --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <memory>
#include <random>

#include "engine/encoder.h"
#include "engine/tools/random_model.h"

namespace {

struct Shape {
  const char* name;
  int hidden, layers, heads, intermediate;
};

constexpr Shape kBertBase{"bert-base", 768, 12, 12, 3072};
constexpr Shape kMiniLm{"minilm-l6", 384, 6, 12, 1536};

engine::Encoder& EncoderFor(const Shape& shape) {
  static std::map<std::string, std::unique_ptr<engine::Encoder>> encoders;
  auto it = encoders.find(shape.name);
  if (it != encoders.end()) return *it->second;
  const std::string dir =
      (std::filesystem::temp_directory_path() / (std::string("bench-") + shape.name)).string();
  engine::RandomModelSpec spec;
  spec.config.hidden_size = shape.hidden;
  spec.config.num_layers = shape.layers;
  spec.config.num_heads = shape.heads;
  spec.config.intermediate_size = shape.intermediate;
  if (!std::filesystem::exists(dir + "/config.json")) {
    if (absl::Status s = engine::WriteRandomModel(dir, spec); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      std::abort();
    }
  }
  auto encoder = engine::Encoder::Load(dir, engine::EncoderOptions{});
  if (!encoder.ok()) {
    std::fprintf(stderr, "%s\n", std::string(encoder.status().message()).c_str());
    std::abort();
  }
  return *encoders.emplace(shape.name, *std::move(encoder)).first->second;
}

void BM_Encode(benchmark::State& state, Shape shape) {
  const int batch_size = static_cast<int>(state.range(0));
  const int seq = static_cast<int>(state.range(1));
  engine::Encoder& encoder = EncoderFor(shape);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> token(5, encoder.config().vocab_size - 1);
  std::vector<std::vector<int32_t>> ids(batch_size, std::vector<int32_t>(seq));
  std::vector<engine::Sequence> batch;
  for (auto& s : ids) {
    for (int32_t& id : s) id = token(rng);
    batch.push_back({s, {}});
  }
  engine::EncodeResult result;
  if (!encoder.Encode(batch, &result).ok()) state.SkipWithError("encode failed");
  for (auto _ : state) {
    if (!encoder.Encode(batch, &result).ok()) state.SkipWithError("encode failed");
  }
  const double tokens = static_cast<double>(batch_size) * seq;
  const double h = shape.hidden;
  const double flops =
      (2.0 * (4 * h * h + 2 * h * shape.intermediate) * tokens + 4.0 * h * seq * tokens) *
      shape.layers;
  state.counters["tokens_per_s"] =
      benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(BM_Encode, bert_base, kBertBase)
    ->Args({8, 128})
    ->Args({1, 128})
    ->Args({1, 512})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, minilm_l6, kMiniLm)
    ->Args({8, 128})
    ->Args({1, 128})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
