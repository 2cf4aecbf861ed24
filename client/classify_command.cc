// encoder-client classify [texts...] [--pair]: one Classify call; one JSON
// line per input: {"scores": [{"id": 1, "label": "pos", "score": 0.9}, ...]}.
#include "client/channel.h"
#include "client/commands.h"
#include "client/inputs.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

int RunClassify(const ConnectionOptions& connection, const ClassifyOptions& options,
                std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<encoder::v1::Input>> inputs = CollectInputs(options.inputs);
  if (!inputs.ok()) {
    err << "encoder-client: " << inputs.status().message() << "\n";
    return 2;
  }
  if (inputs->empty()) {
    err << "encoder-client: classify needs texts (pairs with --pair) or --input FILE\n";
    return 2;
  }
  encoder::v1::ClassifyRequest request;
  request.set_model(connection.model);
  for (const encoder::v1::Input& input : *inputs) *request.add_inputs() = input;
  request.set_raw_scores(options.raw_scores);
  if (options.truncate) request.set_truncate(true);
  if (options.truncate_left) {
    request.set_truncation_direction(encoder::v1::TRUNCATION_DIRECTION_LEFT);
  }
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  encoder::v1::ClassifyResponse response;
  const grpc::Status status = stub->Classify(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  for (const encoder::v1::Prediction& prediction : response.predictions()) {
    out << MessageToJsonLine(prediction) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace client
