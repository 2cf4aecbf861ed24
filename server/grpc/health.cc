#include "server/grpc/health.h"

#include <utility>

#include "grpc/health/v1/health.pb.h"

namespace server {

HealthReporter::HealthReporter(grpc::HealthCheckServiceInterface* service,
                               std::vector<std::string> models)
    : service_(service), models_(std::move(models)) {
  // gRPC's built-in health service carries no protobuf descriptors; touching
  // ours links them in, so reflection clients (grpcurl) can call it by name.
  grpc::health::v1::HealthCheckRequest::descriptor();
}

void HealthReporter::SetServing(bool serving) {
  if (service_ == nullptr) return;
  service_->SetServingStatus("", serving);
  service_->SetServingStatus(kEncoderServiceName, serving);
  for (const std::string& model : models_) service_->SetServingStatus(model, serving);
}

}  // namespace server
