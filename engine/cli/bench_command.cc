#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "engine/encoder.h"

namespace cli {

double EncoderFlops(const engine::ModelConfig& c, int64_t tokens, int64_t sum_sq_lengths) {
  const double h = c.hidden_size;
  const double inter = c.intermediate_size;
  // Per token and layer: Q, K, V and output projections (4 H^2) and the FFN (2 H I).
  const double dense = 2.0 * (4.0 * h * h + 2.0 * h * inter) * static_cast<double>(tokens);
  // Per sequence and layer: Q K^T and P V, each L^2 H multiply-adds.
  const double attention = 4.0 * h * static_cast<double>(sum_sq_lengths);
  return (dense + attention) * c.num_layers;
}

absl::Status RunBench(const CommonOptions& common, const BenchOptions& bench, std::ostream& out) {
  if (bench.batch <= 0 || bench.seq <= 0 || bench.iters <= 0) {
    return absl::InvalidArgumentError("--batch, --seq and --iters must be positive");
  }
  const bool variable = bench.min_length > 0;
  if (variable && (bench.max_length < bench.min_length)) {
    return absl::InvalidArgumentError("--lengths MIN:MAX needs 0 < MIN <= MAX");
  }
  const int longest = variable ? bench.max_length : bench.seq;
  engine::EncoderOptions options = common.engine;
  options.max_batch_tokens = std::max(options.max_batch_tokens, bench.batch * longest);
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(common.model_dir, options);
  if (!encoder.ok()) return encoder.status();
  const engine::ModelConfig& config = (*encoder)->config();

  std::mt19937 rng(bench.seed);
  std::uniform_int_distribution<int32_t> token(5, config.vocab_size - 1);
  std::uniform_int_distribution<int> length(bench.min_length, bench.max_length);
  std::vector<std::vector<int32_t>> ids(static_cast<size_t>(bench.batch));
  std::vector<engine::Sequence> batch;
  int64_t tokens = 0;
  int64_t sum_sq_lengths = 0;
  for (auto& sequence : ids) {
    const int len = variable ? length(rng) : bench.seq;
    sequence.resize(static_cast<size_t>(len));
    for (int32_t& id : sequence) id = token(rng);
    batch.push_back({sequence, {}});
    tokens += len;
    sum_sq_lengths += static_cast<int64_t>(len) * len;
  }
  engine::EncodeResult result;
  for (int warmup = 0; warmup < 2; ++warmup) {
    if (absl::Status s = (*encoder)->Encode(batch, &result); !s.ok()) return s;
  }
  std::vector<double> seconds;
  for (int i = 0; i < bench.iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = (*encoder)->Encode(batch, &result); !s.ok()) return s;
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double flops = EncoderFlops(config, tokens, sum_sq_lengths);
  char line[512];
  std::snprintf(line, sizeof(line),
                "{\"batch\":%d,\"seq\":%d,\"min_length\":%d,\"max_length\":%d,\"tokens\":%lld,"
                "\"iters\":%d,\"threads\":%d,\"precision\":\"%s\",\"median_seconds\":%.6f,"
                "\"min_seconds\":%.6f,\"tokens_per_second\":%.1f,\"gflops\":%.1f}",
                bench.batch, variable ? 0 : bench.seq, variable ? bench.min_length : bench.seq,
                longest, static_cast<long long>(tokens), bench.iters, options.threads,
                engine::PrecisionName(options.precision), median, seconds.front(),
                static_cast<double>(tokens) / median, flops / median * 1e-9);
  out << line << "\n";
  return absl::OkStatus();
}

}  // namespace cli
