#pragma once

#include <ostream>
#include <string>

#include <grpcpp/support/status.h>

namespace client {

// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT.
std::string StatusCodeName(int code);

// Prints "encoder-client: CODE: message" and returns the exit status 1.
int ReportRpcError(const grpc::Status& status, std::ostream& err);

}  // namespace client
