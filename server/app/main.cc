// encoder-server: serves a BERT-family encoder over gRPC (--port, 50051) and
// HTTP (--http-port, 8080: OpenAI /v1/embeddings and TEI routes; 0: off).
//
// Flags may also come from the environment (for containers): flag --foo-bar
// reads ENCODER_FOO_BAR, e.g. ENCODER_MODEL=/models/minilm ENCODER_PORT=50051.
// A flag on the command line wins over its variable.
//
// Exit status: 0 after a clean shutdown on SIGTERM/SIGINT (all queued and
// running work answered within --shutdown-grace); 1 when the server cannot
// start (one line on stderr says why) or the grace ran out; 2 for bad flags.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/flag_help.h"
#include "common/version_flag.h"
#include "engine/thread_count.h"
#include "server/app/command_line.h"
#include "server/app/encoder_server.h"
#include "server/app/quantization_flag.h"
#include "server/app/server_config.h"
#include "server/core/api/api_keys.h"
#include "server/core/log.h"
#include "server/grpc/protobuf_log.h"

namespace {

// The configuration's defaults, which the flags' defaults are: each is
// written once, in its struct (ServerConfig, RequestLimits, BatcherConfig,
// HttpOptions).
const server::ServerConfig& Defaults() {
  static const server::ServerConfig* const defaults = new server::ServerConfig;
  return *defaults;
}

}  // namespace

ABSL_FLAG(std::string, model, "",
          "model directory: config.json, *.safetensors, tokenizer.json or vocab.txt (or a "
          "Hugging Face cache folder models--ORG--NAME: its refs/main snapshot); several "
          "models: repeat --model NAME=DIR (or NAME=DIR,NAME=DIR), each request naming its "
          "model in its \"model\" field");
ABSL_FLAG(std::string, served_model_name, "",
          "the model's name in answers and metrics (default: the hub name ORG/NAME when --model "
          "is in the Hugging Face cache, else the directory's name)");
ABSL_FLAG(std::string, host, Defaults().host, "address to listen on");
ABSL_FLAG(int, port, Defaults().port, "gRPC port (0: any free port, logged at start)");
ABSL_FLAG(int, metrics_port, Defaults().metrics_port,
          "Prometheus metrics port: GET /metrics on --host (0: any free port, logged at start)");
ABSL_FLAG(int, http_port, *Defaults().http_port,
          "HTTP API port: OpenAI POST /v1/embeddings, GET /v1/models, GET /v1/models/{id}; TEI "
          "POST /embed, /tokenize, /decode, GET /info, /health; GET /metrics (0: off)");
ABSL_FLAG(bool, auto_truncate, Defaults().limits.auto_truncate,
          "cut inputs longer than the model's maximum when a request does not say "
          "\"truncate\" (false: refuse them); every route, gRPC too");
ABSL_FLAG(std::string, long_inputs, "",
          "embeddings and rerank: an input longer than the model's maximum is cut (truncate), "
          "run as overlapping windows whose results are pooled (window), or refused (error) when "
          "the request says neither long_input nor truncate; empty: as --auto-truncate says");
ABSL_FLAG(int, window_overlap_tokens, -1,
          "tokens two consecutive windows share in window mode (-1: a quarter of a window)");
ABSL_FLAG(int, http_threads, Defaults().http.threads,
          "HTTP handler threads: they parse request bodies, tokenize and render answers (never "
          "held by a connection)");
ABSL_FLAG(int, http_io_threads, Defaults().http.io_threads,
          "HTTP event loops (epoll) that accept, read and write every connection");
ABSL_FLAG(int, http_max_connections, Defaults().http.max_connections,
          "HTTP connections open at once; past it a new connection is answered 503 and closed "
          "(the open-file limit is raised to fit when the hard limit allows)");
ABSL_FLAG(int64_t, http_max_header_bytes, Defaults().http.max_header_bytes,
          "largest HTTP request line and headers; larger ones get 431 and the connection closes");
ABSL_FLAG(int64_t, http_max_body_bytes, Defaults().http.max_body_bytes,
          "largest HTTP request body; larger ones get 413");
ABSL_FLAG(absl::Duration, http_timeout, absl::FromChrono(Defaults().http.default_timeout),
          "deadline of an HTTP request without an X-Request-Timeout-Ms header; past it, 504");
ABSL_FLAG(absl::Duration, http_header_timeout, absl::FromChrono(Defaults().http.header_timeout),
          "time for an HTTP request's line and headers to arrive (from the connection's start "
          "or the request's first byte); past it 408 and the connection closes");
ABSL_FLAG(absl::Duration, http_body_timeout, absl::FromChrono(Defaults().http.body_timeout),
          "time for an HTTP request's body to arrive after its headers; past it 408 and the "
          "connection closes (a slow sender is never served after the fact)");
ABSL_FLAG(absl::Duration, http_idle_timeout, absl::FromChrono(Defaults().http.idle_timeout),
          "an HTTP keep-alive connection without a request for this long is closed");
ABSL_FLAG(absl::Duration, http_write_timeout, absl::FromChrono(Defaults().http.write_timeout),
          "time to write one HTTP response; a client that does not read it is disconnected");
ABSL_FLAG(std::vector<std::string>, api_key, {},
          "API key required on every call but health and /metrics (HTTP: Authorization: Bearer "
          "KEY; gRPC: authorization metadata); repeat the flag or separate keys with commas; "
          "none: no authentication");
ABSL_FLAG(std::string, api_keys_file, "",
          "file of API keys, one a line ('#' comments), added to --api-key");
ABSL_FLAG(int, threads, Defaults().threads,
          "engine threads (0: OMP_NUM_THREADS if set, else the CPUs this process may use: its "
          "CPU affinity capped by its cgroup CPU quota, rounded up; logged at start)");
ABSL_FLAG(std::string, precision, Defaults().precision,
          "fp32; int8: weights quantized per output channel at load, activations per token; or "
          "bf16: weights and matmul inputs in bf16, accumulated in fp32 (CPUs with AVX512_BF16 "
          "or AMX; refused at start elsewhere)");
ABSL_FLAG(std::string, isa, "",
          "instruction-set level the engine may use: scalar, avx2, avx2_vnni, avx512, "
          "avx512_vnni or avx512_bf16 (default: the best this CPU has)");
ABSL_FLAG(int64_t, max_batch_tokens, Defaults().batcher.max_batch_tokens,
          "most real (unpadded) tokens in one engine batch");
ABSL_FLAG(int, max_batch_inputs, Defaults().batcher.max_batch_inputs,
          "most inputs in one engine batch");
ABSL_FLAG(absl::Duration, max_queue_delay, absl::FromChrono(Defaults().ignored_max_queue_delay),
          "no longer used (accepted so that existing deployments start; a value above 0 is "
          "logged as ignored): a batch is cut the moment the engine is free, so a request that "
          "finds it idle starts at once and inputs that arrive during a batch join the next");
ABSL_FLAG(int64_t, max_queue_tokens, Defaults().batcher.max_queue_tokens,
          "most tokens waiting in the queue; beyond it new requests get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_inputs_per_request, Defaults().limits.max_inputs_per_request,
          "most inputs in one Encode request");
ABSL_FLAG(int64_t, cache_bytes, Defaults().cache_bytes,
          "bytes of per-input results kept (LRU) and shared by identical inputs, all models "
          "together; 0: no cache");
ABSL_FLAG(int, max_rerank_texts, Defaults().limits.max_rerank_texts,
          "most texts in one rerank request (split inside the server into parts of at most "
          "--max-inputs-per-request and one batch)");
ABSL_FLAG(
    int64_t, max_output_vectors, Defaults().limits.max_output_vectors,
    "most vectors one request may return: token states (pooling NONE, /embed_all) and "
    "ColBERT vectors over all its inputs; beyond it the request is INVALID_ARGUMENT (HTTP 422 "
    "on the TEI-style routes)");
ABSL_FLAG(int64_t, max_text_bytes, Defaults().limits.max_text_bytes,
          "most bytes in one input text");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::FromChrono(Defaults().shutdown_grace),
          "on SIGTERM/SIGINT, how long queued and running work may take to finish");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for TLS on the gRPC port (with --tls-key; none: plaintext)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "mutual TLS: PEM CA certificates; clients must present a certificate signed by one "
          "(needs --tls-cert and --tls-key)");
ABSL_FLAG(int64_t, max_receive_message_bytes, Defaults().max_receive_message_bytes,
          "largest request message gRPC accepts; larger ones get RESOURCE_EXHAUSTED (0: derived "
          "from --max-inputs-per-request, --max-text-bytes and --max-tokens-per-request, so that "
          "every request they allow fits)");
ABSL_FLAG(int64_t, max_tokens_per_request, Defaults().limits.max_tokens_per_request,
          "most tokens (after tokenization) over all inputs of one Encode request or stream "
          "message; beyond it INVALID_ARGUMENT");
ABSL_FLAG(int, max_concurrent_streams, Defaults().max_concurrent_streams,
          "HTTP/2 streams (calls) open at once per connection; a client's further calls wait");
ABSL_FLAG(absl::Duration, handshake_timeout, absl::FromChrono(Defaults().handshake_timeout),
          "a new gRPC connection that has not finished its TLS and HTTP/2 handshake (the "
          "client's preface and SETTINGS) within this is closed");
ABSL_FLAG(absl::Duration, max_connection_idle, absl::FromChrono(Defaults().max_connection_idle),
          "a connection without calls for this long is closed (GOAWAY)");
ABSL_FLAG(std::string, quantization_ranges, "",
          "int8/uint8 embeddings' calibration: a JSON file {\"ranges\": [[min, ...], [max, "
          "...]]} (sentence-transformers' ranges, one value per embedding dimension); several "
          "models: NAME=FILE entries (repeat the flag or separate them with commas); a model "
          "without one reads quantization_ranges.json from its directory, if any");

namespace {

constexpr char kUsage[] =
    "usage: encoder-server --model DIR [--port 50051] [--http-port 8080] [flags]\n"
    "       encoder-server --model NAME=DIR --model NAME=DIR ... [flags]\n"
    "Serves a Transformer encoder over gRPC (encoder.v1, --port) and HTTP (OpenAI\n"
    "/v1/embeddings and text-embeddings-inference routes, --http-port; 0: off), with\n"
    "Prometheus metrics on --metrics-port. --version prints the version.\n"
    "Each flag --foo-bar may also be set with the environment variable ENCODER_FOO_BAR;\n"
    "the command line wins. Flag names take '-' or '_'.\n";

// Abseil's parser ends the process with exit(1) on an unknown flag or a value
// that does not parse, after printing its one line; bad flags exit 2 here.
// While it parses, an atexit handler turns that exit into _exit(2) (stderr is
// unbuffered, so the line is out). Not armed for --help and friends, whose
// output goes to stdout and must be flushed.
std::atomic<bool> parsing_flags{false};

void ExitTwoOnBadFlags() {
  if (parsing_flags.load()) _exit(2);
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    for (const char* prefix :
         {"--help", "-help", "--version", "-version", "--only_check_args", "-only_check_args"}) {
      if (args[i].rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

const std::vector<std::string> kFlagNames = {"model",
                                             "served_model_name",
                                             "host",
                                             "port",
                                             "metrics_port",
                                             "http_port",
                                             "http_threads",
                                             "http_io_threads",
                                             "http_max_connections",
                                             "http_max_header_bytes",
                                             "http_max_body_bytes",
                                             "http_timeout",
                                             "http_header_timeout",
                                             "http_body_timeout",
                                             "http_idle_timeout",
                                             "http_write_timeout",
                                             "api_key",
                                             "api_keys_file",
                                             "threads",
                                             "precision",
                                             "isa",
                                             "max_batch_tokens",
                                             "max_batch_inputs",
                                             "max_queue_delay",
                                             "max_queue_tokens",
                                             "max_inputs_per_request",
                                             "cache_bytes",
                                             "max_rerank_texts",
                                             "max_output_vectors",
                                             "max_text_bytes",
                                             "auto_truncate",
                                             "long_inputs",
                                             "window_overlap_tokens",
                                             "shutdown_grace",
                                             "tls_cert",
                                             "tls_key",
                                             "tls_client_ca",
                                             "max_receive_message_bytes",
                                             "max_tokens_per_request",
                                             "max_concurrent_streams",
                                             "max_connection_idle",
                                             "handshake_timeout",
                                             "quantization_ranges"};

server::ServerConfig ConfigFromFlags() {
  server::ServerConfig config;
  // Checked with the rest in ValidateServerConfig (a bad entry leaves no
  // model: "--model is required" unless the entry's own error is logged).
  if (absl::Status status = server::ParseModelFlag(absl::GetFlag(FLAGS_model), &config);
      !status.ok()) {
    server::core::LogError(status.message());
    std::exit(2);
  }
  config.served_model_name = absl::GetFlag(FLAGS_served_model_name);
  config.host = absl::GetFlag(FLAGS_host);
  config.port = absl::GetFlag(FLAGS_port);
  config.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  // The flag's 0 is off, the config's nullopt (the config's 0 is "any free
  // port", as for its other ports).
  if (const int http_port = absl::GetFlag(FLAGS_http_port); http_port == 0) {
    config.http_port = std::nullopt;
  } else {
    config.http_port = http_port;
  }
  config.http.threads = absl::GetFlag(FLAGS_http_threads);
  config.http.io_threads = absl::GetFlag(FLAGS_http_io_threads);
  config.http.max_connections = absl::GetFlag(FLAGS_http_max_connections);
  config.http.max_header_bytes = absl::GetFlag(FLAGS_http_max_header_bytes);
  config.http.max_body_bytes = absl::GetFlag(FLAGS_http_max_body_bytes);
  config.http.default_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_http_timeout));
  config.http.header_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_http_header_timeout));
  config.http.body_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_http_body_timeout));
  config.http.idle_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_http_idle_timeout));
  config.http.write_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_http_write_timeout));
  config.threads = absl::GetFlag(FLAGS_threads);
  config.precision = absl::GetFlag(FLAGS_precision);
  config.isa = absl::GetFlag(FLAGS_isa);
  config.batcher.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  config.batcher.max_batch_inputs = absl::GetFlag(FLAGS_max_batch_inputs);
  config.ignored_max_queue_delay = absl::ToChronoMicroseconds(absl::GetFlag(FLAGS_max_queue_delay));
  config.batcher.max_queue_tokens = absl::GetFlag(FLAGS_max_queue_tokens);
  server::core::RequestLimits& limits = config.limits;
  limits.max_inputs_per_request = absl::GetFlag(FLAGS_max_inputs_per_request);
  limits.max_rerank_texts = absl::GetFlag(FLAGS_max_rerank_texts);
  limits.max_output_vectors = absl::GetFlag(FLAGS_max_output_vectors);
  limits.max_text_bytes = absl::GetFlag(FLAGS_max_text_bytes);
  config.cache_bytes = absl::GetFlag(FLAGS_cache_bytes);
  limits.auto_truncate = absl::GetFlag(FLAGS_auto_truncate);
  if (const std::string mode = absl::GetFlag(FLAGS_long_inputs); !mode.empty()) {
    if (mode == "truncate" || mode == "error") {
      limits.auto_truncate = mode == "truncate";  // every route and /info agree
      limits.long_inputs =
          mode == "truncate" ? server::core::LongInput::kTruncate : server::core::LongInput::kError;
    } else if (mode == "window") {
      limits.long_inputs = server::core::LongInput::kWindow;
    } else {
      std::fprintf(stderr, "--long-inputs is \"%s\"; it must be truncate, window or error\n",
                   mode.c_str());
      std::exit(2);
    }
  }
  if (const int overlap = absl::GetFlag(FLAGS_window_overlap_tokens); overlap >= 0) {
    limits.window_overlap_tokens = overlap;
  }
  config.shutdown_grace = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_shutdown_grace));
  config.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  config.max_receive_message_bytes = absl::GetFlag(FLAGS_max_receive_message_bytes);
  limits.max_tokens_per_request = absl::GetFlag(FLAGS_max_tokens_per_request);
  config.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  config.max_connection_idle = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_max_connection_idle));
  config.handshake_timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_handshake_timeout));
  if (absl::Status status =
          server::ParseQuantizationRangesFlag(absl::GetFlag(FLAGS_quantization_ranges), &config);
      !status.ok()) {
    server::core::LogError(status.message());
    std::exit(2);
  }
  return config;
}

// Abseil keeps only the last occurrence of a flag; the values of every
// --`name` (--api_key, --model) are joined into one --name=a,b,... (names are
// normalized already).
std::vector<std::string> JoinRepeated(const std::vector<std::string>& args,
                                      const std::string& name) {
  const std::string flag = "--" + name;
  std::vector<std::string> out;
  std::vector<std::string> values;
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") flags_ended = true;
    if (!flags_ended && args[i] == flag && i + 1 < args.size()) {
      values.push_back(args[++i]);
    } else if (!flags_ended && args[i].rfind(flag + "=", 0) == 0) {
      values.push_back(args[i].substr(flag.size() + 1));
    } else {
      out.push_back(args[i]);
    }
  }
  if (!values.empty()) out.insert(out.begin() + 1, flag + "=" + absl::StrJoin(values, ","));
  return out;
}

// "engine threads: 2 (CPU affinity 2 CPUs, cgroup quota none),
// OMP_WAIT_POLICY=passive": how many threads and why, and how idle OpenMP
// threads wait (common/omp_passive_wait_preinit.cc), which together decide
// how the engine shares a busy machine.
std::string EngineThreadsLine(int threads, const std::string& reason) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin_count = std::getenv("GOMP_SPINCOUNT");
  return absl::StrCat("engine threads: ", threads, " (", reason, "), ",
                      policy != nullptr       ? absl::StrCat("OMP_WAIT_POLICY=", policy)
                      : spin_count != nullptr ? absl::StrCat("GOMP_SPINCOUNT=", spin_count)
                                              : "libgomp's default wait policy");
}

}  // namespace

int main(int argc, char** argv) {
  // Block the stop signals before any thread exists: every thread (gRPC's,
  // the engine's) inherits the mask, and only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::SetProgramUsageMessage(kUsage);
  common::SetVersionFlagOutput("encoder-server");
  if (absl::Status status = server::ApplyEnvironmentOverrides(kFlagNames); !status.ok()) {
    server::core::LogError(status.message());
    return 2;
  }
  std::vector<std::string> args = JoinRepeated(
      JoinRepeated(JoinRepeated(server::NormalizeFlagNames(argc, argv), "api_key"), "model"),
      "quantization_ranges");
  if (common::AsksForFlagHelp(args)) {
    common::PrintFlagHelp(std::cout, kUsage, "server/", [](const std::string& name) {
      return "env " + server::EnvironmentVariableFor(name);
    });
    return 0;
  }
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  if (!AsksForHelp(args)) {
    std::atexit(ExitTwoOnBadFlags);
    parsing_flags = true;
  }
  const std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  parsing_flags = false;
  if (positional.size() > 1) {
    server::core::LogError(
        absl::StrCat("unexpected argument \"", positional[1], "\" (see --help)"));
    return 2;
  }
  server::ServerConfig config = ConfigFromFlags();
  absl::StatusOr<std::vector<std::string>> keys = server::core::CollectApiKeys(
      absl::GetFlag(FLAGS_api_key), absl::GetFlag(FLAGS_api_keys_file));
  if (!keys.ok()) {
    server::core::LogError(keys.status().message());
    return 2;
  }
  config.api_keys = *std::move(keys);
  // Values out of range or inconsistent are bad flags too (exit 2); what
  // Start finds later (the model, TLS files, a port in use) exits 1.
  if (absl::Status status = server::ValidateServerConfig(config); !status.ok()) {
    server::core::LogError(status.message());
    return 2;
  }
  server::RouteProtobufLogs();
  std::string threads_reason = "--threads / ENCODER_THREADS";
  if (config.threads == 0) {
    const engine::ThreadCount threads = engine::DefaultThreadCount();
    config.threads = threads.threads;
    threads_reason = threads.reason;
  }

  absl::StatusOr<std::unique_ptr<server::EncoderServer>> server =
      server::EncoderServer::Start(config);
  if (!server.ok()) {
    server::core::LogError(server.status().message());
    return 1;
  }
  // Once started: a server that cannot start says only why, in one line.
  server::core::LogEvent(EngineThreadsLine(config.threads, threads_reason));
  if (config.ignored_max_queue_delay.count() > 0) {
    server::core::LogEvent(
        "--max-queue-delay is ignored: batches are cut the moment the engine is free (no "
        "wait for company; docs/configuration.md)");
  }

  int received = 0;
  sigwait(&stop_signals, &received);
  server::core::LogEvent(absl::StrCat("received ", received == SIGTERM ? "SIGTERM" : "SIGINT"));
  (*server)->BeginShutdown();
  // An engine batch cannot be interrupted: if work overruns the grace by
  // much, leave anyway rather than hang the pod's termination.
  std::thread([grace = config.shutdown_grace] {
    std::this_thread::sleep_for(grace + std::chrono::seconds(5));
    server::core::LogError(
        "shutdown grace exceeded by 5 s; exiting without waiting for running work");
    _exit(1);
  }).detach();
  const bool drained = (*server)->FinishShutdown();
  server->reset();
  return drained ? 0 : 1;
}
