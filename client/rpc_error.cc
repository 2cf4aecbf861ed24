#include "client/rpc_error.h"

#include "absl/status/status.h"

namespace client {

std::string StatusCodeName(int code) {
  // gRPC's codes are absl's, number for number.
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

int ReportRpcError(const grpc::Status& status, std::ostream& err) {
  err << "encoder-client: " << StatusCodeName(status.error_code()) << ": " << status.error_message()
      << "\n";
  return 1;
}

}  // namespace client
