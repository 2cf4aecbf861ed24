// The subcommands of encoder-cli, separate from flag parsing so each reads
// as one small function.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "engine/config.h"
#include "engine/heads.h"

namespace cli {

struct CommonOptions {
  std::string model_dir;
  engine::EncoderOptions engine;
};

struct BenchOptions {
  int batch = 8;
  int seq = 128;  // every sequence's length, unless min_length > 0
  int iters = 10;
  // Variable-length traffic: lengths uniform in [min_length, max_length].
  int min_length = 0;
  int max_length = 0;
  uint32_t seed = 42;
  // Per-op timing of the timed iterations (engine::profile), added to the JSON.
  bool profile = false;
  // Outputs computed per sequence in the timed loop ("dense,sparse,colbert").
  std::string outputs;
  // The last layer's rows kept (engine/token_rows.h): a cross-encoder's or
  // CLS embedder's pass is kFirst.
  engine::TokenRows rows = engine::TokenRows::kAll;
};

struct MakeModelOptions {
  std::string out;
  int hidden = 384;
  int layers = 6;
  int heads = 12;
  int intermediate = 1536;
  int max_position = 512;
  std::string vocab_file;
  uint64_t seed = 1;
  std::string layer_norm = "post";
  std::string hidden_act = "gelu";
  // Any model_type of the architecture registry; empty: its first family's
  // (DefaultModelConfig).
  std::string model_type;
  int vocab_size = 0;  // > 0: the demo vocabulary padded to this many tokens
  // "" (none), classifier or masked-lm (engine::RandomHead).
  std::string head;
  int labels = 1;    // head classifier
  int kv_heads = 0;  // grouped-query K/V heads; 0: heads
  int head_dim = 0;  // 0: hidden / heads
  // "bidirectional" or "causal"; empty: the family's.
  std::string attention;
};

absl::Status RunEncode(const CommonOptions& common, const std::string& pooling, bool normalize,
                       std::istream& in, std::ostream& out);
// The classifier's logits per JSON line of ids ({"logits": [...]}), or its
// scores with `activation`.
absl::Status RunScore(const CommonOptions& common, bool activation, std::istream& in,
                      std::ostream& out);
// SPLADE weights per JSON line of ids ({"sparse": [[id, weight], ...]}).
absl::Status RunSparse(const CommonOptions& common, const engine::SparseOptions& options,
                       std::istream& in, std::ostream& out);
absl::Status RunInspect(const CommonOptions& common, std::ostream& out);
absl::Status RunBench(const CommonOptions& common, const BenchOptions& bench, std::ostream& out);
absl::Status RunMakeModel(const MakeModelOptions& options, std::ostream& out);

// Forward-pass cost of one batch, in floating-point operations (multiply and
// add counted separately): the dense layers plus attention's two products.
double EncoderFlops(const engine::ModelConfig& config, int64_t tokens, int64_t sum_sq_lengths);

}  // namespace cli
