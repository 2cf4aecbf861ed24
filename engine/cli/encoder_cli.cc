// encoder-cli: the engine's command-line tool.
//   encode     --model DIR [--pooling MODE] [--normalize]   (JSON lines on stdin)
//   score      --model DIR [--precision int8] [--activation]   (JSON lines of ids on stdin)
//   sparse     --model DIR [--sparse-pooling max|sum] [--sparse-activation log1p_relu|relu]
//              [--max-active-dims N]                          (JSON lines of ids on stdin)
//   inspect    --model DIR
//   bench      --model DIR --batch B (--seq S | --lengths MIN:MAX [--seed N]) [--iters N]
//              [--threads T] [--precision fp32|int8|bf16] [--profile]
// encode, score, sparse, inspect and bench take --isa LEVEL (or ENCODER_ISA): the
// instruction-set level the engine may use (engine/isa.h).
//   make-model --out DIR --hidden H --layers L --heads A --intermediate I
//              [--vocab FILE] [--seed S] [--layer-norm pre|post] [--max-position P]
//              [--head classifier|masked-lm] [--labels N]
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "common/flag_help.h"
#include "common/flag_names.h"
#include "common/version_flag.h"
#include "engine/config.h"
#include "engine/isa.h"

ABSL_FLAG(std::string, model, "",
          "encode, score, sparse, inspect, bench: model directory (config.json + safetensors)");
ABSL_FLAG(std::string, pooling, "cls",
          "encode: none, cls, mean, pooler, max, mean_sqrt_len, weightedmean or lasttoken");
ABSL_FLAG(bool, normalize, false, "encode: L2-normalize pooled vectors");
ABSL_FLAG(bool, activation, false,
          "score: apply the classifier's score activation (sigmoid / softmax / identity) to the "
          "logits");
ABSL_FLAG(std::string, sparse_pooling, "max", "sparse: max or sum over the tokens");
ABSL_FLAG(std::string, sparse_activation, "log1p_relu", "sparse: log1p_relu or relu");
ABSL_FLAG(int, max_active_dims, 0, "sparse: keep only the largest N weights (0: all)");
ABSL_FLAG(int, batch, 8, "bench: sequences per batch");
ABSL_FLAG(int, seq, 128, "bench: tokens per sequence");
ABSL_FLAG(int, iters, 10, "bench: timed iterations");
ABSL_FLAG(std::string, lengths, "",
          "bench: MIN:MAX for sequence lengths uniform in [MIN, MAX] (overrides --seq)");
ABSL_FLAG(uint32_t, seed, 42,
          "bench, make-model: the seed of --lengths and the token ids (bench), of the weights "
          "(make-model)");
ABSL_FLAG(std::string, outputs, "",
          "bench: also compute these outputs of every sequence in the timed loop, "
          "comma-separated: dense (CLS, normalized), sparse (bge-m3's lexical weights), colbert; "
          "empty: the forward pass alone");
ABSL_FLAG(std::string, rows, "all",
          "bench: the last layer's token rows computed: all, first (a CLS-pooled embedder's or "
          "cross-encoder's pass) or last (last-token pooling)");
ABSL_FLAG(bool, profile, false,
          "bench: time each op kind of the forward pass and add the table to the JSON");
ABSL_FLAG(int, threads, 0,
          "encode, score, sparse, inspect, bench: engine threads (0: OMP_NUM_THREADS if set, else "
          "the CPUs this process may use: its "
          "CPU affinity capped by its cgroup CPU quota, rounded up)");
ABSL_FLAG(int, max_batch_tokens, 16384,
          "encode, score, sparse, inspect, bench: most tokens per engine batch");
ABSL_FLAG(std::string, precision, "fp32",
          "encode, score, sparse, bench: fp32, int8 (weights quantized at load) or bf16 (CPUs with "
          "AVX512_BF16 or AMX)");
ABSL_FLAG(std::string, isa, "",
          "encode, score, sparse, inspect, bench: instruction-set level the engine may use: "
          "scalar, avx2, avx2_vnni, avx512, "
          "avx512_vnni or avx512_bf16 (default: ENCODER_ISA, else the best this CPU has)");
ABSL_FLAG(std::string, out, "", "make-model: output directory");
ABSL_FLAG(int, hidden, 384, "make-model: hidden size");
ABSL_FLAG(int, layers, 6, "make-model: layers");
ABSL_FLAG(int, heads, 12, "make-model: attention heads");
ABSL_FLAG(int, intermediate, 1536, "make-model: FFN inner size");
ABSL_FLAG(int, max_position, 512, "make-model: maximum sequence length");
ABSL_FLAG(std::string, vocab, "", "make-model: vocab.txt to use (default: the demo vocabulary)");
ABSL_FLAG(std::string, layer_norm, "",
          "make-model: LayerNorm placement, pre or post (default: the family's; BERT: post)");
ABSL_FLAG(std::string, hidden_act, "",
          "make-model: gelu, gelu_new, relu or silu (default: the family's; BERT: gelu)");
ABSL_FLAG(std::string, model_type, "",
          "make-model: a model_type of the architecture registry (docs/models.md), written with "
          "its family's config keys, defaults and tensor names, and position rows for "
          "max_position tokens (default: the registry's first family)");
ABSL_FLAG(int, vocab_size, 0,
          "make-model: pad the demo vocabulary with [unusedN] to this many tokens (0: as is)");
ABSL_FLAG(std::string, head, "",
          "make-model: a task head on the encoder: classifier (XForSequenceClassification, "
          "id2label LABEL_0..), masked-lm (XForMaskedLM, decoder tied; for SPLADE) or causal-lm "
          "(XForCausalLM, LM head tied: Qwen3-Reranker's layout); empty: none");
ABSL_FLAG(int, labels, 1, "make-model: the classifier head's label count (1: a reranker)");
ABSL_FLAG(int, kv_heads, 0,
          "make-model: K/V heads of grouped-query attention, for families with "
          "num_key_value_heads (qwen3, gemma3_text); 0: --heads");
ABSL_FLAG(int, head_dim, 0,
          "make-model: each head's width, for families with head_dim (qwen3, gemma3_text); 0: "
          "--hidden / --heads");
ABSL_FLAG(std::string, attention, "",
          "make-model: bidirectional or causal, for families whose config chooses "
          "(gemma3_text: use_bidirectional_attention); empty: the family's default");

namespace {

absl::Status Run(const std::string& command) {
  cli::CommonOptions common;
  common.model_dir = absl::GetFlag(FLAGS_model);
  common.engine.threads = absl::GetFlag(FLAGS_threads);
  common.engine.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  if (!engine::ParsePrecision(absl::GetFlag(FLAGS_precision), &common.engine.precision)) {
    return absl::InvalidArgumentError("--precision must be fp32, int8 or bf16");
  }
  // Before any encoder loads: oneDNN's cap is fixed on first use.
  if (const std::string isa = absl::GetFlag(FLAGS_isa); !isa.empty()) {
    absl::StatusOr<engine::IsaLevel> level = engine::ParseIsaLevel(isa);
    if (!level.ok())
      return absl::InvalidArgumentError(absl::StrCat("--isa: ", level.status().message()));
    if (absl::Status status = engine::UseIsaLevel(*level); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat("--isa: ", status.message()));
    }
  }
  if (command == "encode") {
    return cli::RunEncode(common, absl::GetFlag(FLAGS_pooling), absl::GetFlag(FLAGS_normalize),
                          std::cin, std::cout);
  }
  if (command == "score") {
    return cli::RunScore(common, absl::GetFlag(FLAGS_activation), std::cin, std::cout);
  }
  if (command == "sparse") {
    engine::SparseOptions sparse;
    const std::string pooling = absl::GetFlag(FLAGS_sparse_pooling);
    const std::string activation = absl::GetFlag(FLAGS_sparse_activation);
    if (pooling != "max" && pooling != "sum") {
      return absl::InvalidArgumentError("--sparse-pooling must be max or sum");
    }
    if (activation != "log1p_relu" && activation != "relu") {
      return absl::InvalidArgumentError("--sparse-activation must be log1p_relu or relu");
    }
    sparse.pooling = pooling == "sum" ? engine::SparsePooling::kSum : engine::SparsePooling::kMax;
    sparse.activation = activation == "relu" ? engine::SparseActivation::kRelu
                                             : engine::SparseActivation::kLog1pRelu;
    sparse.max_active_dims = absl::GetFlag(FLAGS_max_active_dims);
    if (sparse.max_active_dims < 0) {
      return absl::InvalidArgumentError("--max-active-dims must not be negative");
    }
    return cli::RunSparse(common, sparse, std::cin, std::cout);
  }
  if (command == "inspect") return cli::RunInspect(common, std::cout);
  if (command == "bench") {
    cli::BenchOptions bench;
    bench.batch = absl::GetFlag(FLAGS_batch);
    bench.seq = absl::GetFlag(FLAGS_seq);
    bench.iters = absl::GetFlag(FLAGS_iters);
    bench.seed = absl::GetFlag(FLAGS_seed);
    bench.profile = absl::GetFlag(FLAGS_profile);
    bench.outputs = absl::GetFlag(FLAGS_outputs);
    const std::string rows = absl::GetFlag(FLAGS_rows);
    bool rows_known = false;
    for (engine::TokenRows r :
         {engine::TokenRows::kAll, engine::TokenRows::kFirst, engine::TokenRows::kLast}) {
      if (rows == engine::TokenRowsName(r)) {
        bench.rows = r;
        rows_known = true;
      }
    }
    if (!rows_known) return absl::InvalidArgumentError("--rows must be all, first or last");
    if (const std::string lengths = absl::GetFlag(FLAGS_lengths); !lengths.empty()) {
      if (std::sscanf(lengths.c_str(), "%d:%d", &bench.min_length, &bench.max_length) != 2 ||
          bench.min_length <= 0) {
        return absl::InvalidArgumentError("--lengths must be MIN:MAX with 0 < MIN <= MAX");
      }
    }
    return cli::RunBench(common, bench, std::cout);
  }
  if (command == "make-model") {
    cli::MakeModelOptions make;
    make.out = absl::GetFlag(FLAGS_out);
    make.hidden = absl::GetFlag(FLAGS_hidden);
    make.layers = absl::GetFlag(FLAGS_layers);
    make.heads = absl::GetFlag(FLAGS_heads);
    make.intermediate = absl::GetFlag(FLAGS_intermediate);
    make.max_position = absl::GetFlag(FLAGS_max_position);
    make.vocab_file = absl::GetFlag(FLAGS_vocab);
    make.seed = absl::GetFlag(FLAGS_seed);
    make.layer_norm = absl::GetFlag(FLAGS_layer_norm);
    make.hidden_act = absl::GetFlag(FLAGS_hidden_act);
    make.model_type = absl::GetFlag(FLAGS_model_type);
    make.vocab_size = absl::GetFlag(FLAGS_vocab_size);
    make.head = absl::GetFlag(FLAGS_head);
    make.labels = absl::GetFlag(FLAGS_labels);
    make.kv_heads = absl::GetFlag(FLAGS_kv_heads);
    make.head_dim = absl::GetFlag(FLAGS_head_dim);
    make.attention = absl::GetFlag(FLAGS_attention);
    return cli::RunMakeModel(make, std::cout);
  }
  return absl::InvalidArgumentError(
      "unknown command \"" + command +
      "\" (expected encode, score, sparse, inspect, bench or make-model)");
}

}  // namespace

const std::vector<std::string> kCommands = {"encode",  "score", "sparse",
                                            "inspect", "bench", "make-model"};
constexpr char kUsage[] =
    "usage: encoder-cli <encode|score|sparse|inspect|bench|make-model> [flags]\n"
    "  encode      JSON lines of ids on stdin -> one JSON line of vectors each\n"
    "  score       JSON lines of ids (and token_type_ids) -> the classifier's logits each\n"
    "  sparse      JSON lines of ids -> the SPLADE weights each\n"
    "  inspect     the model's configuration and weights\n"
    "  bench       time the forward pass on random ids\n"
    "  make-model  write a random model directory\n"
    "encoder-cli COMMAND --help lists that command's flags.";

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  common::SetVersionFlagOutput("encoder-cli");
  std::vector<std::string> normalized = common::NormalizeFlagNames(argc, argv);
  if (common::AsksForFlagHelp(normalized)) {
    common::PrintFlagHelp(
        std::cout, kUsage, "engine/cli/", [](const std::string&) { return ""; },
        common::CommandNamedIn(normalized, kCommands), kCommands);
    return 0;
  }
  std::vector<char*> args;
  for (std::string& arg : normalized) args.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (positional.size() != 2) {
    std::fprintf(stderr, "%s\n", kUsage);
    return 2;
  }
  const absl::Status status = Run(positional[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "encoder-cli: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
