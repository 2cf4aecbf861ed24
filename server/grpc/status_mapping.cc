#include "server/grpc/status_mapping.h"

#include <string>

namespace server {

grpc::StatusCode ToGrpcCode(absl::StatusCode code) {
  // absl's codes are gRPC's, number for number; outside the answered set a
  // code says nothing the client could act on, so it is a bug of ours.
  return static_cast<grpc::StatusCode>(static_cast<int>(AnsweredCode(code)));
}

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

std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace server
