#include "server/server_config.h"

#include "absl/strings/str_cat.h"
#include "engine/config.h"

namespace server {
namespace {

absl::Status MustBe(bool condition, const char* flag, const char* rule, int64_t value) {
  if (condition) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " must be ", rule, " (got ", value, ")"));
}

}  // namespace

absl::Status ValidateServerConfig(const ServerConfig& config) {
  if (config.model_dir.empty()) return absl::InvalidArgumentError("--model is required");
  if (config.host.empty()) return absl::InvalidArgumentError("--host must not be empty");
  if (config.metrics_port != 0 && config.metrics_port == config.port) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-port must differ from --port (both are ", config.port, ")"));
  }
  if (engine::Precision precision; !engine::ParsePrecision(config.precision, &precision)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--precision must be fp32 or int8 (got \"", config.precision, "\")"));
  }
  const BatcherConfig& batcher = config.batcher;
  for (absl::Status status : {
           MustBe(config.port >= 0 && config.port <= 65535, "port", "in 0..65535", config.port),
           MustBe(config.metrics_port >= 0 && config.metrics_port <= 65535, "metrics-port",
                  "in 0..65535", config.metrics_port),
           MustBe(config.threads >= 0, "threads", "0 or more", config.threads),
           MustBe(batcher.max_batch_tokens > 0, "max-batch-tokens", "positive",
                  batcher.max_batch_tokens),
           MustBe(batcher.max_batch_inputs > 0, "max-batch-inputs", "positive",
                  batcher.max_batch_inputs),
           MustBe(batcher.max_queue_delay.count() >= 0, "max-queue-delay", "0 or more (us)",
                  batcher.max_queue_delay.count()),
           MustBe(batcher.max_queue_tokens >= batcher.max_batch_tokens, "max-queue-tokens",
                  "at least --max-batch-tokens", batcher.max_queue_tokens),
           MustBe(config.max_inputs_per_request > 0, "max-inputs-per-request", "positive",
                  config.max_inputs_per_request),
           MustBe(config.max_text_bytes > 0, "max-text-bytes", "positive", config.max_text_bytes),
           MustBe(config.shutdown_grace.count() >= 0, "shutdown-grace", "0 or more (ms)",
                  config.shutdown_grace.count()),
       }) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace server
