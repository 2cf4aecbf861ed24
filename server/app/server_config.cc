#include "server/app/server_config.h"

#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "engine/config.h"
#include "engine/isa.h"

namespace server {
namespace {

absl::Status MustBe(bool condition, const char* flag, const char* rule, int64_t value) {
  if (condition) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " must be ", rule, " (got ", value, ")"));
}

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

absl::Status ValidateTls(const ServerConfig& config) {
  if (!config.tls_cert.empty() && config.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --tls-key (the certificate's private key)");
  }
  if (config.tls_cert.empty() && !config.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-key needs --tls-cert (the certificate it belongs to)");
  }
  if (!config.tls_client_ca.empty() && config.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key (the server's own "
        "certificate)");
  }
  return absl::OkStatus();
}

}  // namespace

const char* TransportSecurityName(const ServerConfig& config) {
  if (config.tls_cert.empty()) return "plaintext";
  return config.tls_client_ca.empty() ? "TLS" : "mutual TLS";
}

int64_t MaxReceiveMessageBytes(const ServerConfig& config) {
  if (config.max_receive_message_bytes != 0) return config.max_receive_message_bytes;
  // In double: the factors are validated separately and may be large.
  const core::RequestLimits& limits = config.limits;
  const double derived = static_cast<double>(limits.max_inputs_per_request) *
                             (2.0 * static_cast<double>(limits.max_text_bytes) + 32) +
                         10.0 * static_cast<double>(limits.max_tokens_per_request) + 4096;
  return derived >= static_cast<double>(kIntMax) ? kIntMax : static_cast<int64_t>(derived);
}

std::vector<ModelSpec> ServedModelSpecs(const ServerConfig& config) {
  if (!config.models.empty()) return config.models;
  return {ModelSpec{config.served_model_name, config.model_dir}};
}

absl::Status ParseModelFlag(const std::string& value, ServerConfig* config) {
  config->model_dir.clear();
  config->models.clear();
  const std::vector<std::string> entries = absl::StrSplit(value, ',', absl::SkipEmpty());
  const bool named = entries.size() > 1 || absl::StrContains(value, '=');
  if (!named) {
    config->model_dir = value;
    return absl::OkStatus();
  }
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == entry.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model \"", entry,
                       "\": with several models each is NAME=DIR (a name, '=', a directory)"));
    }
    config->models.push_back({entry.substr(0, equals), entry.substr(equals + 1)});
  }
  return absl::OkStatus();
}

absl::Status ValidateServerConfig(const ServerConfig& config) {
  if (config.model_dir.empty() && config.models.empty()) {
    return absl::InvalidArgumentError("--model is required");
  }
  if (!config.models.empty()) {
    if (!config.model_dir.empty()) {
      return absl::InvalidArgumentError("--model: give either one DIR or NAME=DIR entries");
    }
    if (!config.served_model_name.empty()) {
      return absl::InvalidArgumentError(
          "--served-model-name applies to one unnamed --model DIR; with --model NAME=DIR the "
          "name is NAME");
    }
    for (size_t i = 0; i < config.models.size(); ++i) {
      if (config.models[i].name.empty() || config.models[i].dir.empty()) {
        return absl::InvalidArgumentError("--model: each entry is NAME=DIR");
      }
      for (size_t j = 0; j < i; ++j) {
        if (config.models[j].name == config.models[i].name) {
          return absl::InvalidArgumentError(
              absl::StrCat("--model: the name \"", config.models[i].name, "\" is used twice"));
        }
      }
    }
  }
  if (config.host.empty()) return absl::InvalidArgumentError("--host must not be empty");
  if (config.metrics_port != 0 && config.metrics_port == config.port) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-port must differ from --port (both are ", config.port, ")"));
  }
  if (!config.isa.empty()) {
    if (absl::StatusOr<engine::IsaLevel> isa = engine::ParseIsaLevel(config.isa); !isa.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--isa: ", isa.status().message()));
    }
  }
  const int http_port = config.http_port.value_or(0);
  if (http_port > 0 && (http_port == config.port || http_port == config.metrics_port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http-port must differ from --port and --metrics-port (got ", http_port, ")"));
  }
  if (engine::Precision precision; !engine::ParsePrecision(config.precision, &precision)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--precision must be fp32, int8 or bf16 (got \"", config.precision, "\")"));
  }
  RETURN_IF_ERROR(ValidateTls(config));
  const core::BatcherConfig& batcher = config.batcher;
  const http::HttpOptions& http = config.http;
  const core::RequestLimits& limits = config.limits;
  for (absl::Status status : {
           MustBe(config.port >= 0 && config.port <= 65535, "port", "in 0..65535", config.port),
           MustBe(config.metrics_port >= 0 && config.metrics_port <= 65535, "metrics-port",
                  "in 0..65535", config.metrics_port),
           MustBe(http_port >= 0 && http_port <= 65535, "http-port", "in 0..65535 (0: off)",
                  http_port),
           MustBe(http.threads > 0 && http.threads <= 1024, "http-threads", "in 1..1024",
                  http.threads),
           MustBe(http.io_threads > 0 && http.io_threads <= 64, "http-io-threads", "in 1..64",
                  http.io_threads),
           MustBe(http.max_connections > 0, "http-max-connections", "positive",
                  http.max_connections),
           MustBe(http.max_header_bytes >= 1024 && http.max_header_bytes <= (1 << 30),
                  "http-max-header-bytes", "in 1024..2^30", http.max_header_bytes),
           MustBe(http.max_body_bytes >= 1024, "http-max-body-bytes", "at least 1024",
                  http.max_body_bytes),
           MustBe(http.default_timeout.count() > 0, "http-timeout", "positive (ms)",
                  http.default_timeout.count()),
           MustBe(http.header_timeout.count() > 0, "http-header-timeout", "positive (ms)",
                  http.header_timeout.count()),
           MustBe(http.body_timeout.count() > 0, "http-body-timeout", "positive (ms)",
                  http.body_timeout.count()),
           MustBe(http.idle_timeout.count() > 0, "http-idle-timeout", "positive (ms)",
                  http.idle_timeout.count()),
           MustBe(http.write_timeout.count() > 0, "http-write-timeout", "positive (ms)",
                  http.write_timeout.count()),
           MustBe(config.threads >= 0, "threads", "0 or more", config.threads),
           MustBe(batcher.max_batch_tokens > 0, "max-batch-tokens", "positive",
                  batcher.max_batch_tokens),
           MustBe(batcher.max_batch_inputs > 0, "max-batch-inputs", "positive",
                  batcher.max_batch_inputs),
           MustBe(config.ignored_max_queue_delay.count() >= 0, "max-queue-delay", "0 or more (us)",
                  config.ignored_max_queue_delay.count()),
           MustBe(batcher.max_queue_tokens >= batcher.max_batch_tokens, "max-queue-tokens",
                  "at least --max-batch-tokens", batcher.max_queue_tokens),
           MustBe(limits.max_inputs_per_request > 0, "max-inputs-per-request", "positive",
                  limits.max_inputs_per_request),
           MustBe(limits.max_rerank_texts > 0, "max-rerank-texts", "positive",
                  limits.max_rerank_texts),
           MustBe(limits.max_output_vectors > 0, "max-output-vectors", "positive",
                  limits.max_output_vectors),
           MustBe(limits.max_text_bytes > 0, "max-text-bytes", "positive", limits.max_text_bytes),
           MustBe(config.cache_bytes >= 0, "cache-bytes", "0 (off) or more", config.cache_bytes),
           MustBe(config.shutdown_grace.count() >= 0, "shutdown-grace", "0 or more (ms)",
                  config.shutdown_grace.count()),
           MustBe(config.max_receive_message_bytes == 0 ||
                      (config.max_receive_message_bytes >= 1024 &&
                       config.max_receive_message_bytes <= kIntMax),
                  "max-receive-message-bytes", "0 (derived) or in 1024..2147483647",
                  config.max_receive_message_bytes),
           MustBe(limits.max_tokens_per_request > 0, "max-tokens-per-request", "positive",
                  limits.max_tokens_per_request),
           MustBe(config.max_concurrent_streams > 0, "max-concurrent-streams", "positive",
                  config.max_concurrent_streams),
           MustBe(config.max_connection_idle.count() > 0 &&
                      config.max_connection_idle.count() <= kIntMax,
                  "max-connection-idle", "positive and at most 596h (ms)",
                  config.max_connection_idle.count()),
           MustBe(
               config.handshake_timeout.count() > 0 && config.handshake_timeout.count() <= kIntMax,
               "handshake-timeout", "positive and at most 596h (ms)",
               config.handshake_timeout.count()),
       }) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace server
