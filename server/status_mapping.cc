#include "server/status_mapping.h"

#include <string>

namespace server {
namespace {

grpc::StatusCode ToGrpcCode(absl::StatusCode code) {
  const int value = static_cast<int>(code);
  // absl's codes 0..16 are gRPC's, number for number; anything else is ours to fix.
  if (value < 0 || value > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    return grpc::StatusCode::INTERNAL;
  }
  return static_cast<grpc::StatusCode>(value);
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(ToGrpcCode(status.code()), std::string(status.message()));
}

encoder::v1::Error ToProtoError(const absl::Status& status) {
  encoder::v1::Error error;
  error.set_code(static_cast<int>(ToGrpcCode(status.code())));
  error.set_message(std::string(status.message()));
  return error;
}

}  // namespace server
