// The standard grpc.health.v1.Health service, through gRPC's built-in
// implementation: the overall status ("") and the encoder service's own.
#pragma once

#include <grpcpp/health_check_service_interface.h>

namespace server {

inline constexpr char kEncoderServiceName[] = "encoder.v1.Encoder";

class HealthReporter {
 public:
  // `service` may be null (health checks disabled); it is owned by the grpc::Server.
  explicit HealthReporter(grpc::HealthCheckServiceInterface* service);

  // SERVING or NOT_SERVING, for "" and for encoder.v1.Encoder.
  void SetServing(bool serving);

 private:
  grpc::HealthCheckServiceInterface* const service_;
};

}  // namespace server
