// The gRPC listener: encoder.v1.Encoder (EncodeService), the standard health
// service (health.h: "", encoder.v1.Encoder and each model) and reflection,
// on one port, plaintext, TLS or mutual TLS, with the connection limits and
// keepalive of GrpcOptions. The HTTP adapter's counterpart is
// server/http/http_server.h.
#pragma once

#include <chrono>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "server/core/batching/clock.h"
#include "server/core/model_set.h"
#include "server/grpc/encode_service.h"
#include "server/grpc/grpc_options.h"
#include "server/grpc/health.h"

namespace server {

class GrpcServer {
 public:
  // Listens and serves `models` (with their API keys); health is SERVING
  // when this returns. FAILED_PRECONDITION when gRPC cannot listen (the port
  // is taken, or it refused the TLS certificate or key). `models` and
  // `clock` must outlive the server.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(const GrpcOptions& options,
                                                           core::ServedModels* models,
                                                           core::Clock* clock);
  ~GrpcServer();  // Shutdown() with no deadline, when not done yet
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const { return port_; }
  // Health: SERVING or NOT_SERVING (from the start of shutdown).
  void SetServing(bool serving);
  // From now on new calls, and new requests on open streams, are refused
  // with UNAVAILABLE; open streams end once their requests are answered.
  void StopAccepting();
  // gRPC's shutdown: stops listening, sends GOAWAY, waits for the calls
  // already started until `deadline`, then cancels what remains. Blocks.
  void Shutdown(std::chrono::system_clock::time_point deadline);

 private:
  GrpcServer(core::ServedModels* models, core::Clock* clock) : service_(models, clock) {}

  EncodeService service_;                 // outlives the server that calls into it
  std::unique_ptr<grpc::Server> server_;  // null until listening
  std::unique_ptr<HealthReporter> health_;
  int port_ = 0;
};

}  // namespace server
