// encoder-client sparse [texts...]: one EncodeSparse call; one JSON line per
// input: {"entries": [{"id": 2054, "weight": 1.7, "token": "what"}, ...]}.
#include "client/channel.h"
#include "client/commands.h"
#include "client/inputs.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

int RunSparse(const ConnectionOptions& connection, const SparseOptions& options, std::ostream& out,
              std::ostream& err) {
  absl::StatusOr<std::vector<encoder::v1::Input>> inputs = CollectInputs(options.inputs);
  if (!inputs.ok()) {
    err << "encoder-client: " << inputs.status().message() << "\n";
    return 2;
  }
  if (inputs->empty()) {
    err << "encoder-client: sparse needs texts, --input FILE or --ids\n";
    return 2;
  }
  if (options.max_active_dims < 0) {
    err << "encoder-client: --max_active_dims must be 0 (all) or more\n";
    return 2;
  }
  encoder::v1::EncodeSparseRequest request;
  request.set_model(connection.model);
  for (const encoder::v1::Input& input : *inputs) *request.add_inputs() = input;
  request.set_max_active_dims(options.max_active_dims);
  request.set_return_tokens(options.return_tokens);
  if (options.truncate) request.set_truncate(true);
  if (options.truncate_left) {
    request.set_truncation_direction(encoder::v1::TRUNCATION_DIRECTION_LEFT);
  }
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  encoder::v1::EncodeSparseResponse response;
  const grpc::Status status = stub->EncodeSparse(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  for (const encoder::v1::SparseEmbedding& embedding : response.embeddings()) {
    out << MessageToJsonLine(embedding) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace client
