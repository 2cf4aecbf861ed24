// Everything the server is told at start. main.cc copies its flags into it;
// the libraries and tests take this struct, never flags.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/batcher.h"

namespace server {

struct ServerConfig {
  std::string model_dir;
  std::string host = "0.0.0.0";
  int port = 50051;                // 0: any free port; EncoderServer::port() says which
  int metrics_port = 8081;         // GET /metrics; 0: any free port, EncoderServer::metrics_port()
  int threads = 0;                 // engine threads; 0: all cores
  std::string precision = "fp32";  // fp32 or int8 (engine::ParsePrecision)
  BatcherConfig batcher;
  int max_inputs_per_request = 64;
  int64_t max_text_bytes = 65536;  // per text; a pair's two texts count separately
  std::chrono::milliseconds shutdown_grace{20000};
};

// Checks values against each other; errors name the flag to fix.
absl::Status ValidateServerConfig(const ServerConfig& config);

}  // namespace server
