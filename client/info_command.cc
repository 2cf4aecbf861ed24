// encoder-client info: the model's description as one JSON object.
#include "client/channel.h"
#include "client/commands.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

int RunInfo(const ConnectionOptions& connection, std::ostream& out, std::ostream& err) {
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  encoder::v1::ModelInfo info;
  encoder::v1::GetModelInfoRequest request;
  request.set_model(connection.model);
  const grpc::Status status = stub->GetModelInfo(&context, request, &info);
  if (!status.ok()) return ReportRpcError(status, err);
  out << MessageToJsonLine(info) << "\n";
  out.flush();
  return 0;
}

}  // namespace client
