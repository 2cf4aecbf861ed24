// encoder-client health: the standard grpc.health.v1 check; prints the
// status name (SERVING, NOT_SERVING, ...) and exits 0 only for SERVING.
#include "client/channel.h"
#include "client/commands.h"
#include "client/rpc_error.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace client {

int RunHealth(const ConnectionOptions& connection, const std::string& service, std::ostream& out,
              std::ostream& err) {
  auto stub = grpc::health::v1::Health::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  out << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  out.flush();
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace client
