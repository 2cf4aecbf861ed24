// encoder-client: talks to encoder-server.
//   encode   [texts...] [--pair] [--input FILE] [--ids 101,2023,102]
//            [--pooling cls|mean|none|pooler|max|mean_sqrt_len|weightedmean|lasttoken]
//            [--normalize] [--truncate]
//            [--truncate-left] [--prompt-name NAME]
//   tokenize [texts...] [--pair] [--input FILE] [--truncate]
//   decode   --ids 0,35378,2 | --input FILE [--keep-special-tokens]
//   info
//   health   [--service NAME]
//   bench    [--concurrency N | --rate R] [--duration 10s] [--inputs-per-request K]
//            [--input TEXT_FILE | --text-words MIN:MAX] [--json]
// Common: --target (default localhost:50051; dns:///host:port with --lb
// round_robin spreads calls over every address), --timeout (default 30s);
// TLS: --tls (system roots) or --tls-ca FILE, --tls-cert/--tls-key (mutual
// TLS), --tls-server-name NAME; --api-key KEY (or ENCODER_API_KEY).
// Flag names take '-' or '_' (--inputs-per-request = --inputs_per_request).
// Put texts that start with '-' after "--".
#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "client/bench_options.h"
#include "client/bench_texts.h"
#include "client/channel.h"
#include "client/chunks_command.h"
#include "client/client_options.h"
#include "client/commands.h"
#include "common/flag_help.h"
#include "common/flag_names.h"
#include "common/version_flag.h"

ABSL_FLAG(std::string, target, "localhost:50051", "server address (any gRPC target)");
ABSL_FLAG(std::string, lb, "", "load-balancing policy, e.g. round_robin (default: pick_first)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(30), "deadline of each call");
ABSL_FLAG(bool, tls, false, "use TLS, verifying the server with the system's CA roots");
ABSL_FLAG(std::string, tls_ca, "", "use TLS, verifying the server with this PEM CA file");
ABSL_FLAG(std::string, tls_cert, "",
          "client certificate (PEM) for mutual TLS, with --tls-key; implies TLS");
ABSL_FLAG(std::string, tls_key, "", "private key (PEM) of --tls-cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "the name checked in the server's certificate (default: the target's host), e.g. "
          "localhost when dialling 127.0.0.1; implies TLS");
ABSL_FLAG(bool, pair, false, "texts are taken two by two as (text, text_pair)");
ABSL_FLAG(std::string, input, "",
          "encode, tokenize, classify, sparse: JSON lines file ('-': stdin): {\"text\": ...}, "
          "{\"text\": ..., \"text_pair\": ...} or {\"ids\": [...], \"token_type_ids\": [...]}; "
          "bench: a text file, one text per line");
ABSL_FLAG(std::string, ids, "", "one input of token ids, e.g. 101,2023,102");
ABSL_FLAG(bool, keep_special_tokens, false,
          "decode: keep special tokens ([CLS], <s>, ...) in the text");
ABSL_FLAG(std::string, pooling, "",
          "cls, mean, none (all token states) or pooler; "
          "default: the model's");
ABSL_FLAG(bool, normalize, false, "L2-normalize the vectors");
ABSL_FLAG(bool, truncate, false,
          "cut inputs longer than the model's maximum (encode without it: the server's "
          "--auto-truncate decides)");
ABSL_FLAG(bool, truncate_left, false,
          "encode, classify, sparse: --truncate cuts the beginning of a text and keeps its end");
ABSL_FLAG(std::string, model, "",
          "encode, tokenize, decode, rerank, classify, sparse, bench, info: the served model to "
          "use, for a server of several models "
          "(default: the server's one model)");
ABSL_FLAG(std::string, prompt_name, "",
          "encode: one of the model's prompts (config_sentence_transformers.json), e.g. query");
ABSL_FLAG(std::string, prompt, "", "encode: a literal prompt put before each text");
ABSL_FLAG(int, dimensions, 0,
          "encode, chunks: keep the first N values of each vector (Matryoshka)");
ABSL_FLAG(std::string, embedding_type, "float",
          "encode: float, int8, uint8, binary or ubinary (sentence-transformers' "
          "quantize_embeddings; int8/uint8 need the server's calibration ranges): printed as "
          "{\"int8\": [integers], ...}");
ABSL_FLAG(bool, unnormalized, false,
          "encode, chunks: vectors not normalized, even for a model whose pipeline normalizes");
ABSL_FLAG(std::string, api_key, "",
          "API key, sent as \"authorization: Bearer KEY\" (default: $ENCODER_API_KEY)");
ABSL_FLAG(int, inputs_per_call, 64, "encode: inputs per Encode call");
ABSL_FLAG(int, top_n, 0, "rerank: answer only the best N texts (0: all)");
ABSL_FLAG(bool, return_text, false, "rerank: echo each ranked text");
ABSL_FLAG(std::string, instruction, "",
          "rerank: the task instruction of a reranker that scores pairs in a prompt "
          "(Qwen3-Reranker); default: the model's");
ABSL_FLAG(bool, raw_scores, false,
          "rerank, classify: the model's logits, without its activation (sigmoid/softmax)");
ABSL_FLAG(int, max_active_dims, 0, "sparse, multi: keep the largest N weights per input (0: all)");
ABSL_FLAG(bool, return_tokens, false, "sparse, multi: each entry's vocabulary token");
ABSL_FLAG(std::string, input_type, "document",
          "multi: document or query (how a ColBERT model encodes the texts)");
ABSL_FLAG(std::string, outputs, "dense,sparse,colbert",
          "multi: the outputs of one pass, comma-separated: dense, sparse, colbert");
ABSL_FLAG(std::string, service, "", "health: the service to check (default: the server)");
ABSL_FLAG(
    int, concurrency, 0,
    "bench: calls in flight (closed loop; default 8), or their cap with --rate (default 1024)");
ABSL_FLAG(double, rate, 0, "bench: open loop at this many calls per second (Poisson arrivals)");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "bench: how long calls are started");
ABSL_FLAG(int, inputs_per_request, 1, "bench: texts per Encode call");
ABSL_FLAG(std::string, text_words, "4:16",
          "bench: synthetic texts of MIN:MAX words (uniform), when there is no --input");
ABSL_FLAG(double, invalid_fraction, 0,
          "bench: this fraction of calls sends an empty text (refused with INVALID_ARGUMENT)");
ABSL_FLAG(int, connections, 1, "bench: HTTP/2 connections to spread the calls over");
ABSL_FLAG(uint64_t, seed, 1, "bench: seed of the synthetic texts, arrivals and invalid calls");
ABSL_FLAG(bool, json, false, "bench: print the report as one JSON object");
ABSL_FLAG(std::string, text, "", "chunks: the long text to encode once and pool per chunk");
ABSL_FLAG(std::string, file, "", "chunks: a file whose whole content is the text ('-': stdin)");
ABSL_FLAG(std::string, chunks, "",
          "chunks: the chunks as START:END code point spans, e.g. 0:100,100:250");
ABSL_FLAG(int, chunk_tokens, 0, "chunks: consecutive chunks of N of the text's tokens");
ABSL_FLAG(int, window_overlap, -1,
          "chunks: tokens shared by consecutive windows of a text longer than the model's "
          "maximum (default: a quarter of a window)");
ABSL_FLAG(bool, progress, true, "bench: a live progress line on stderr when it is a terminal");

namespace {

constexpr char kUsage[] =
    "usage: encoder-client "
    "<encode|tokenize|decode|rerank|classify|sparse|multi|chunks|info|health|bench> "
    "[flags] [texts...]\n"
    "  encode   [texts...] [--pair] [--input FILE] [--ids 1,2,3] [--pooling cls|mean|none|pooler]\n"
    "           [--normalize | --unnormalized] [--truncate [--truncate-left]]\n"
    "           [--prompt-name NAME | --prompt TEXT] [--dimensions N]\n"
    "           [--embedding-type float|int8|uint8|binary|ubinary]\n"
    "  tokenize [texts...] [--pair] [--input FILE] [--truncate]\n"
    "  decode   --ids 1,2,3 | --input FILE [--keep-special-tokens]\n"
    "  rerank   QUERY TEXT... [--top-n N] [--return-text] [--raw-scores] [--truncate]\n"
    "  classify [texts...] [--pair] [--input FILE] [--raw-scores] [--truncate [--truncate-left]]\n"
    "  sparse   [texts...] [--pair] [--input FILE] [--ids 1,2,3] [--max-active-dims N]\n"
    "           [--return-tokens] [--truncate [--truncate-left]]\n"
    "  multi    [texts...] [--outputs dense,sparse,colbert] [--input-type document|query]\n"
    "           [--max-active-dims N]\n"
    "           [--return-tokens] [--truncate [--truncate-left]]\n"
    "  chunks   --text TEXT | --file FILE, --chunks 0:100,100:250 | --chunk-tokens N\n"
    "           [--window-overlap N] [--normalize | --unnormalized] [--dimensions N]\n"
    "  info\n"
    "  health   [--service NAME]\n"
    "  bench    [--concurrency N | --rate R] [--duration 10s] [--inputs-per-request K]\n"
    "           [--input TEXT_FILE | --text-words MIN:MAX] [--invalid-fraction F] [--json]\n"
    "common: --target host:port (default localhost:50051), --lb round_robin, --timeout 30s,\n"
    "        --api-key KEY (or ENCODER_API_KEY in the environment)\n"
    "TLS:    --tls (system roots) | --tls-ca CA.pem, [--tls-cert CERT.pem --tls-key KEY.pem]\n"
    "        (mutual TLS), [--tls-server-name NAME]\n"
    "texts starting with '-' go after \"--\"\n";

// "--input -" becomes "--input=-". Abseil takes a string flag's separate
// value "-" for a forgotten value (a lone "-" or "--" looks like the start of
// the next flag) and warns "Did you really mean to set flag 'input' to the
// value '-'?"; the joined form is the same setting without the warning.
void JoinStdinInput(std::vector<std::string>& args) {
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (args[i] == "--") return;
    if ((args[i] == "--input" || args[i] == "-input") && args[i + 1] == "-") {
      args[i] += "=-";
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
}

}  // namespace

// The commands, for "encoder-client COMMAND --help" (common/flag_help.h).
const std::vector<std::string> kCommands = {"encode",   "tokenize", "decode", "rerank",
                                            "classify", "sparse",   "multi",  "info",
                                            "health",   "bench",    "chunks"};

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  common::SetVersionFlagOutput("encoder-client");
  std::vector<std::string> args = common::NormalizeFlagNames(argc, argv);
  JoinStdinInput(args);
  if (common::AsksForFlagHelp(args)) {
    common::PrintFlagHelp(
        std::cout, kUsage, "client/", [](const std::string&) { return ""; },
        common::CommandNamedIn(args, kCommands), kCommands);
    return 0;
  }
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  if (positional.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = positional[1];

  client::ConnectionOptions connection;
  connection.target = absl::GetFlag(FLAGS_target);
  connection.lb = absl::GetFlag(FLAGS_lb);
  connection.timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_timeout));
  // The environment keeps the key out of the process list.
  connection.api_key = absl::GetFlag(FLAGS_api_key);
  connection.model = absl::GetFlag(FLAGS_model);
  if (const char* key = std::getenv("ENCODER_API_KEY"); connection.api_key.empty() && key) {
    connection.api_key = key;
  }
  client::TlsFiles tls_files;
  tls_files.tls = absl::GetFlag(FLAGS_tls);
  tls_files.ca = absl::GetFlag(FLAGS_tls_ca);
  tls_files.cert = absl::GetFlag(FLAGS_tls_cert);
  tls_files.key = absl::GetFlag(FLAGS_tls_key);
  tls_files.server_name = absl::GetFlag(FLAGS_tls_server_name);
  absl::StatusOr<client::TlsOptions> tls = client::LoadTlsFiles(tls_files);
  if (!tls.ok()) {
    std::cerr << "encoder-client: " << tls.status().message() << "\n";
    return 2;
  }
  connection.tls = *std::move(tls);

  client::InputOptions inputs;
  inputs.texts.assign(positional.begin() + 2, positional.end());
  inputs.pair = absl::GetFlag(FLAGS_pair);
  inputs.input_file = absl::GetFlag(FLAGS_input);
  inputs.ids = absl::GetFlag(FLAGS_ids);

  if (command == "encode") {
    client::EncodeOptions options;
    options.inputs = inputs;
    options.pooling = absl::GetFlag(FLAGS_pooling);
    options.normalize = absl::GetFlag(FLAGS_normalize);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.truncate_left = absl::GetFlag(FLAGS_truncate_left);
    options.prompt_name = absl::GetFlag(FLAGS_prompt_name);
    options.prompt = absl::GetFlag(FLAGS_prompt);
    options.dimensions = absl::GetFlag(FLAGS_dimensions);
    options.unnormalized = absl::GetFlag(FLAGS_unnormalized);
    options.inputs_per_call = absl::GetFlag(FLAGS_inputs_per_call);
    options.embedding_type = absl::GetFlag(FLAGS_embedding_type);
    return client::RunEncode(connection, options, std::cout, std::cerr);
  }
  if (command == "rerank") {
    client::RerankOptions options;
    if (!inputs.texts.empty()) {
      options.query = inputs.texts.front();
      options.texts.assign(inputs.texts.begin() + 1, inputs.texts.end());
    }
    options.top_n = absl::GetFlag(FLAGS_top_n);
    options.return_text = absl::GetFlag(FLAGS_return_text);
    options.raw_scores = absl::GetFlag(FLAGS_raw_scores);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.instruction = absl::GetFlag(FLAGS_instruction);
    return client::RunRerank(connection, options, std::cout, std::cerr);
  }
  if (command == "classify") {
    client::ClassifyOptions options;
    options.inputs = inputs;
    options.raw_scores = absl::GetFlag(FLAGS_raw_scores);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.truncate_left = absl::GetFlag(FLAGS_truncate_left);
    return client::RunClassify(connection, options, std::cout, std::cerr);
  }
  if (command == "sparse") {
    client::SparseOptions options;
    options.inputs = inputs;
    options.max_active_dims = absl::GetFlag(FLAGS_max_active_dims);
    options.return_tokens = absl::GetFlag(FLAGS_return_tokens);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.truncate_left = absl::GetFlag(FLAGS_truncate_left);
    return client::RunSparse(connection, options, std::cout, std::cerr);
  }
  if (command == "multi") {
    client::MultiOptions options;
    options.sparse.inputs = inputs;
    options.sparse.max_active_dims = absl::GetFlag(FLAGS_max_active_dims);
    options.sparse.return_tokens = absl::GetFlag(FLAGS_return_tokens);
    options.sparse.truncate = absl::GetFlag(FLAGS_truncate);
    options.sparse.truncate_left = absl::GetFlag(FLAGS_truncate_left);
    options.outputs = absl::GetFlag(FLAGS_outputs);
    const std::string input_type = absl::GetFlag(FLAGS_input_type);
    if (input_type != "document" && input_type != "query") {
      std::cerr << "encoder-client: --input-type is document or query, not \"" << input_type
                << "\"\n";
      return 2;
    }
    options.query = input_type == "query";
    return client::RunMulti(connection, options, std::cout, std::cerr);
  }
  if (command == "chunks") {
    if (positional.size() > 2) {
      std::cerr << "encoder-client: chunks takes its text from --text or --file\n";
      return 2;
    }
    client::ChunksOptions options;
    options.text = absl::GetFlag(FLAGS_text);
    options.text_file = absl::GetFlag(FLAGS_file);
    options.chunks = absl::GetFlag(FLAGS_chunks);
    options.chunk_tokens = absl::GetFlag(FLAGS_chunk_tokens);
    if (const int overlap = absl::GetFlag(FLAGS_window_overlap); overlap >= 0) {
      options.window_overlap = overlap;
    }
    if (absl::GetFlag(FLAGS_normalize)) options.normalize = true;
    if (absl::GetFlag(FLAGS_unnormalized)) options.normalize = false;
    options.dimensions = absl::GetFlag(FLAGS_dimensions);
    return client::RunChunks(connection, options, std::cout, std::cerr);
  }
  if (command == "decode") {
    return client::RunDecode(connection, inputs, absl::GetFlag(FLAGS_keep_special_tokens),
                             std::cout, std::cerr);
  }
  if (command == "tokenize") {
    return client::RunTokenize(connection, inputs, absl::GetFlag(FLAGS_truncate), std::cout,
                               std::cerr);
  }
  if (positional.size() > 2) {
    std::cerr << "encoder-client: " << command << " takes no texts\n";
    return 2;
  }
  if (command == "info") return client::RunInfo(connection, std::cout, std::cerr);
  if (command == "bench") {
    client::BenchOptions options;
    options.concurrency = absl::GetFlag(FLAGS_concurrency);
    options.rate = absl::GetFlag(FLAGS_rate);
    options.duration = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_duration));
    options.inputs_per_request = absl::GetFlag(FLAGS_inputs_per_request);
    options.input_file = absl::GetFlag(FLAGS_input);
    if (absl::Status status = client::ParseWordRange(absl::GetFlag(FLAGS_text_words),
                                                     &options.min_words, &options.max_words);
        !status.ok()) {
      std::cerr << "encoder-client: " << status.message() << "\n";
      return 2;
    }
    options.pooling = absl::GetFlag(FLAGS_pooling);
    options.normalize = absl::GetFlag(FLAGS_normalize);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.invalid_fraction = absl::GetFlag(FLAGS_invalid_fraction);
    options.connections = absl::GetFlag(FLAGS_connections);
    options.seed = absl::GetFlag(FLAGS_seed);
    options.json = absl::GetFlag(FLAGS_json);
    options.progress = absl::GetFlag(FLAGS_progress);
    return client::RunBench(connection, options, std::cout, std::cerr);
  }
  if (command == "health") {
    return client::RunHealth(connection, absl::GetFlag(FLAGS_service), std::cout, std::cerr);
  }
  std::cerr << "encoder-client: unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
