// The standard grpc.health.v1.Health service, through gRPC's built-in
// implementation: the overall status (""), the encoder service's own, and
// each served model's under its name.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/health_check_service_interface.h>

namespace server {

inline constexpr char kEncoderServiceName[] = "encoder.v1.Encoder";

class HealthReporter {
 public:
  // `service` may be null (health checks disabled); it is owned by the grpc::Server.
  // `models`: the served models' names, each a service name of its own.
  explicit HealthReporter(grpc::HealthCheckServiceInterface* service,
                          std::vector<std::string> models = {});

  // SERVING or NOT_SERVING, for "", for encoder.v1.Encoder and for every
  // model (all models are ready once the server has started).
  void SetServing(bool serving);

 private:
  grpc::HealthCheckServiceInterface* const service_;
  const std::vector<std::string> models_;
};

}  // namespace server
