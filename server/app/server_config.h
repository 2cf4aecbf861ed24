// Everything the server is told at start. main.cc copies its flags into it;
// the libraries and tests take this struct, never flags.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/core/api/request_limits.h"
#include "server/core/batching/batch_request.h"
#include "server/http/http_options.h"

namespace server {

// One served model: its name in requests, answers and metrics (empty:
// DefaultModelName(dir)) and its directory.
struct ModelSpec {
  std::string name;
  std::string dir;
};

struct ServerConfig {
  // One model (--model DIR): its directory, and its name in answers and
  // metrics (--served-model-name; empty: DefaultModelName(model_dir)).
  std::string model_dir;
  std::string served_model_name;
  // Several named models (--model NAME=DIR, repeated), in order; when set,
  // model_dir and served_model_name are empty. Each model has its own queue
  // and batcher; they take turns on the engine (server/core/batching/engine_turns.h).
  std::vector<ModelSpec> models;
  std::string host = "0.0.0.0";
  int port = 50051;         // 0: any free port; EncoderServer::port() says which
  int metrics_port = 8081;  // GET /metrics; 0: any free port, EncoderServer::metrics_port()
  // HTTP API (OpenAI and TEI routes, server/http), on by default as gRPC;
  // nullopt: off (the --http-port flag's 0); 0: any free port, as for the
  // other ports (EncoderServer::http_port() says which).
  std::optional<int> http_port = 8080;
  // Its threads, limits and timeouts (host and port come from above).
  http::HttpOptions http;
  // API keys (both transports); empty: no authentication.
  std::vector<std::string> api_keys;
  int threads = 0;                 // engine threads; 0: all cores
  std::string precision = "fp32";  // fp32, int8 or bf16 (engine::ParsePrecision)
  std::string isa;                 // instruction-set level (engine/isa.h); empty: the CPU's best
  core::BatcherConfig batcher;
  // --max-queue-delay: no longer used (batches are cut the moment the engine
  // is free); accepted so that deployments that set it still start, and
  // logged as ignored when above 0.
  std::chrono::microseconds ignored_max_queue_delay{0};
  // What one request may carry and how its long inputs are treated, for
  // every model and both transports.
  core::RequestLimits limits;
  // The result cache's bound over all models (server/core/cache/result_cache.h); 0: off.
  int64_t cache_bytes = 0;
  std::chrono::milliseconds shutdown_grace{20000};
  // Not a flag: after SIGTERM, how long health says NOT_SERVING while calls
  // are still served (the lame duck), before GOAWAY and refusals; part of the
  // grace.
  std::chrono::milliseconds shutdown_lame_duck{200};

  // TLS on the gRPC port (the metrics port stays plain HTTP). PEM file paths:
  // no certificate means plaintext; a certificate needs its key; a client CA
  // (only with both) means mutual TLS, every client presenting a certificate
  // signed by it.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;

  // Connection and message limits (gRPC channel arguments).
  // Larger messages: RESOURCE_EXHAUSTED (gRPC). 0: derived from the other
  // limits (MaxReceiveMessageBytes), so that every request they allow fits.
  int64_t max_receive_message_bytes = 0;
  int max_concurrent_streams = 256;  // HTTP/2 streams per connection; more wait
  std::chrono::milliseconds max_connection_idle{300000};  // then the connection is closed
  // A new gRPC connection must finish its TLS and HTTP/2 handshake (the
  // client's preface and SETTINGS) within this, or it is closed: a socket
  // that connects and stays silent holds nothing for long (gRPC's own
  // default is 120 s).
  std::chrono::milliseconds handshake_timeout{10000};
  // Keepalive, not flags: the server pings a connection quiet for
  // keepalive_time and drops it when no answer comes within keepalive_timeout
  // (a vanished client's open stream does not hold its memory forever);
  // clients may ping at most every min_client_ping_interval while calls are
  // open (gRPC's default, 5 min, refuses common client keepalive settings).
  std::chrono::milliseconds keepalive_time{60000};
  std::chrono::milliseconds keepalive_timeout{20000};
  std::chrono::milliseconds min_client_ping_interval{10000};

  // int8/uint8 embeddings' calibration files (--quantization-ranges,
  // server/app/quantization_flag.h): by model name, "" for the one model.
  // A model without one reads quantization_ranges.json from its directory
  // when there is one.
  std::map<std::string, std::string> quantization_ranges;
};

// Which security the gRPC port runs with: "plaintext", "TLS" or "mutual TLS".
const char* TransportSecurityName(const ServerConfig& config);

// The gRPC message limit in effect: max_receive_message_bytes, or when it is 0
// the largest request the limits allow: max_inputs_per_request inputs of two
// max_text_bytes texts (a text pair) with their protobuf framing (32 bytes an
// input), plus the token ids of max_tokens_per_request tokens
// with their types (10 bytes a token: two varints of up to 5), plus 4 KiB for
// the rest (request id, options); at most 2^31 - 1.
int64_t MaxReceiveMessageBytes(const ServerConfig& config);

// The models to serve: `models`, or the one of model_dir.
std::vector<ModelSpec> ServedModelSpecs(const ServerConfig& config);

// --model's value: "DIR" (one model, named as --served-model-name says), or
// "NAME=DIR" entries separated by commas (main.cc joins repeated --model
// flags so). Fills model_dir or models.
absl::Status ParseModelFlag(const std::string& value, ServerConfig* config);

// Checks values against each other; errors name the flag to fix.
absl::Status ValidateServerConfig(const ServerConfig& config);

}  // namespace server
