#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/commands.h"
#include "common/status_macros.h"
#include "engine/encoder.h"
#include "runtime/profile.h"

namespace cli {
namespace {

// A "Vm...:  1234 kB" line of /proc/self/status, in bytes; -1 if missing.
int64_t ProcStatusBytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size() + 1, key + ":") == 0) {
      return std::stoll(line.substr(key.size() + 1)) * 1024;
    }
  }
  return -1;
}

// Parameters of the model as loaded: embeddings, every layer, the pooler.
int64_t ParameterCount(const engine::ModelConfig& c, bool has_pooler) {
  const int64_t h = c.hidden_size;
  const int64_t inter = c.intermediate_size;
  const int64_t embeddings =
      (int64_t{c.vocab_size} + c.max_position_embeddings + c.type_vocab_size) * h + 2 * h;
  const int64_t layer = 4 * h * h + 4 * h            // Q, K, V and output projections
                        + 2 * h * inter + inter + h  // FFN
                        + 4 * h;                     // two LayerNorms
  const int64_t final_norm = c.layer_norm_placement == engine::LayerNormPlacement::kPre ? 2 * h : 0;
  return embeddings + c.num_layers * layer + final_norm + (has_pooler ? h * h + h : 0);
}

int64_t CheckpointBytes(const std::string& dir) {
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".safetensors") bytes += entry.file_size(ec);
  }
  return bytes;
}

// The per-op table: calls and milliseconds per iteration, share of the
// forward pass; "other" is the forward pass minus the ops.
std::string ProfileJson(int iters, double forward_seconds_per_iter, std::string* table) {
  using engine::profile::Op;
  const double forward_ms = forward_seconds_per_iter * 1e3;
  std::string json = "[";
  double top_level_ms = 0.0;
  char line[256];
  std::snprintf(line, sizeof(line), "%-12s %10s %14s %8s\n", "op", "calls/iter", "ms/iter",
                "share");
  *table = line;
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const Op op = static_cast<Op>(i);
    const int64_t calls = engine::profile::Calls(op);
    if (calls == 0) continue;
    const double ms = static_cast<double>(engine::profile::Nanoseconds(op)) * 1e-6 / iters;
    top_level_ms += ms;
    std::snprintf(line, sizeof(line),
                  "%s{\"op\":\"%s\",\"calls\":%.1f,\"ms_per_iter\":%.3f,\"share\":%.4f}",
                  json.size() > 1 ? "," : "", engine::profile::OpName(op),
                  static_cast<double>(calls) / iters, ms, ms / forward_ms);
    json += line;
    std::snprintf(line, sizeof(line), "%-12s %10.1f %14.3f %7.1f%%\n", engine::profile::OpName(op),
                  static_cast<double>(calls) / iters, ms, 100.0 * ms / forward_ms);
    *table += line;
  }
  const double other_ms = forward_ms - top_level_ms;
  std::snprintf(line, sizeof(line),
                "%s{\"op\":\"other\",\"calls\":1,\"ms_per_iter\":%.3f,\"share\":%.4f}",
                json.size() > 1 ? "," : "", other_ms, other_ms / forward_ms);
  json += line;
  json += "]";
  std::snprintf(line, sizeof(line), "%-12s %10s %14.3f %7.1f%%\n%-12s %10s %14.3f %7.1f%%\n",
                "other", "", other_ms, 100.0 * other_ms / forward_ms, "forward", "", forward_ms,
                100.0);
  *table += line;
  return json;
}

}  // namespace

double EncoderFlops(const engine::ModelConfig& c, int64_t tokens, int64_t sum_sq_lengths) {
  const double h = c.hidden_size;
  const double inter = c.intermediate_size;
  // Per token and layer: Q, K, V and output projections (4 H^2) and the FFN (2 H I).
  const double dense = 2.0 * (4.0 * h * h + 2.0 * h * inter) * static_cast<double>(tokens);
  // Per sequence and layer: Q K^T and P V, each L^2 H multiply-adds.
  const double attention = 4.0 * h * static_cast<double>(sum_sq_lengths);
  return (dense + attention) * c.num_layers;
}

namespace {

// What --outputs asks of each sequence after the forward pass.
struct BenchOutputs {
  bool dense = false;
  bool sparse = false;
  bool colbert = false;
};

absl::StatusOr<BenchOutputs> ParseBenchOutputs(const std::string& names,
                                               const engine::Encoder& encoder) {
  BenchOutputs outputs;
  for (const absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
    if (name == "dense") {
      outputs.dense = true;
    } else if (name == "sparse" && encoder.has_lexical_weights()) {
      outputs.sparse = true;
    } else if (name == "colbert" && encoder.multi_vector() != nullptr) {
      outputs.colbert = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--outputs: \"", name,
                       "\" is not dense, or sparse / colbert of a model with bge-m3's heads"));
    }
  }
  return outputs;
}

// The outputs of every sequence of `result` (what a server computes per input).
absl::Status ComputeOutputs(const engine::Encoder& encoder, const BenchOutputs& outputs,
                            const std::vector<std::vector<int32_t>>& ids,
                            const engine::EncodeResult& result, std::vector<float>* scratch) {
  std::vector<engine::SparseEntry> entries;
  int rows = 0;
  for (int i = 0; i < result.num_sequences(); ++i) {
    if (outputs.dense) {
      scratch->resize(static_cast<size_t>(result.hidden_size));
      RETURN_IF_ERROR(encoder.Pool(result, i, engine::Pooling::kCls, true, scratch->data()));
    }
    if (outputs.sparse) {
      if (absl::Status s =
              encoder.LexicalWeights(result, i, ids[static_cast<size_t>(i)], 0, &entries);
          !s.ok()) {
        return s;
      }
    }
    if (outputs.colbert) {
      RETURN_IF_ERROR(encoder.MultiVectors(result, i, {}, scratch, &rows));
    }
  }
  return absl::OkStatus();
}

}  // namespace

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
  const auto load_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(common.model_dir, options);
  if (!encoder.ok()) return encoder.status();
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  // The high-water mark of resident memory so far: loading (checkpoint
  // mapped and copied) is what sets it before the first batch.
  const int64_t peak_rss_after_load = ProcStatusBytes("VmHWM");
  const int64_t rss_after_load = ProcStatusBytes("VmRSS");
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
  absl::StatusOr<BenchOutputs> outputs = ParseBenchOutputs(bench.outputs, **encoder);
  if (!outputs.ok()) return outputs.status();
  std::vector<float> scratch;
  engine::EncodeResult result;
  engine::EncodeOptions encode_options;
  encode_options.rows = bench.rows;
  for (int warmup = 0; warmup < 2; ++warmup) {
    RETURN_IF_ERROR((*encoder)->Encode(batch, &result, encode_options));
    RETURN_IF_ERROR(ComputeOutputs(**encoder, *outputs, ids, result, &scratch));
  }
  if (bench.profile) {
    engine::profile::Reset();
    engine::profile::Enable(true);
  }
  std::vector<double> seconds;
  for (int i = 0; i < bench.iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR((*encoder)->Encode(batch, &result, encode_options));
    RETURN_IF_ERROR(ComputeOutputs(**encoder, *outputs, ids, result, &scratch));
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  engine::profile::Enable(false);
  const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / bench.iters;
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double flops = EncoderFlops(config, tokens, sum_sq_lengths);
  const int64_t parameters = ParameterCount(config, (*encoder)->has_pooler());
  char line[768];
  std::snprintf(line, sizeof(line),
                "{\"batch\":%d,\"seq\":%d,\"min_length\":%d,\"max_length\":%d,\"tokens\":%lld,"
                "\"iters\":%d,\"threads\":%d,\"precision\":\"%s\",\"isa\":\"%s\","
                "\"median_seconds\":%.6f,"
                "\"min_seconds\":%.6f,\"tokens_per_second\":%.1f,\"gflops\":%.1f,"
                "\"load_seconds\":%.3f,\"peak_rss_after_load_bytes\":%lld,"
                "\"rss_after_load_bytes\":%lld,\"parameters\":%lld,\"weights_fp32_bytes\":%lld,"
                "\"checkpoint_bytes\":%lld",
                bench.batch, variable ? 0 : bench.seq, variable ? bench.min_length : bench.seq,
                longest, static_cast<long long>(tokens), bench.iters, (*encoder)->threads(),
                engine::PrecisionName(options.precision), engine::IsaLevelName((*encoder)->isa()),
                median, seconds.front(), static_cast<double>(tokens) / median,
                flops / median * 1e-9, load_seconds, static_cast<long long>(peak_rss_after_load),
                static_cast<long long>(rss_after_load), static_cast<long long>(parameters),
                static_cast<long long>(parameters * 4),
                static_cast<long long>(CheckpointBytes(common.model_dir)));
  std::string json = line;
  if (!bench.outputs.empty()) json += absl::StrCat(",\"outputs\":\"", bench.outputs, "\"");
  json += absl::StrCat(",\"rows\":\"", engine::TokenRowsName(bench.rows), "\"");
  if (bench.profile) {
    std::string table;
    json += absl::StrCat(",\"forward_mean_seconds\":", mean,
                         ",\"profile\":", ProfileJson(bench.iters, mean, &table));
    std::fprintf(stderr, "%s", table.c_str());
  }
  out << json << "}\n";
  return absl::OkStatus();
}

}  // namespace cli
