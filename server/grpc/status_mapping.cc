#include "server/grpc/status_mapping.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/core/api/input_error.h"

namespace server {
namespace {

// The message, with how to cut an input that is too long on this API.
std::string Message(const absl::Status& status) {
  const std::optional<core::InputError> input = core::FindInputError(status);
  if (input.has_value() && input->problem == core::InputProblem::kTooLong) {
    return absl::StrCat(status.message(), " (set the request's truncate option to cut it)");
  }
  return std::string(status.message());
}

}  // namespace

grpc::StatusCode ToGrpcCode(absl::StatusCode code) {
  // absl's codes are gRPC's, number for number; outside the answered set a
  // code says nothing the client could act on, so it is a bug of ours.
  return static_cast<grpc::StatusCode>(static_cast<int>(core::AnsweredCode(code)));
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(ToGrpcCode(status.code()), Message(status));
}

encoder::v1::Error ToProtoError(const absl::Status& status) {
  encoder::v1::Error error;
  error.set_code(static_cast<int>(ToGrpcCode(status.code())));
  error.set_message(Message(status));
  return error;
}

std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace server
