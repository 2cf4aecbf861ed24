// encoder-client encode: sends the inputs (in calls of --inputs_per_call) and
// prints one JSON line per input, in input order.
#include <algorithm>

#include "client/commands.h"
#include "client/unary_call.h"

namespace client {

int RunEncode(const ConnectionOptions& connection, const EncodeOptions& options, std::ostream& out,
              std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs =
      CollectCommandInputs(options.inputs, "encode needs texts, --input FILE or --ids", err);
  if (!inputs) return 2;
  absl::StatusOr<encoder::v1::Pooling> pooling = ParsePooling(options.pooling);
  if (!pooling.ok()) {
    err << "encoder-client: " << pooling.status().message() << "\n";
    return 2;
  }
  if (options.inputs_per_call <= 0) {
    err << "encoder-client: --inputs_per_call must be positive\n";
    return 2;
  }
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  for (size_t begin = 0; begin < inputs->size(); begin += options.inputs_per_call) {
    const size_t end = std::min(inputs->size(), begin + options.inputs_per_call);
    encoder::v1::EncodeRequest request;
    for (size_t i = begin; i < end; ++i) *request.add_inputs() = (*inputs)[i];
    request.set_pooling(*pooling);
    request.set_normalize(options.normalize);
    SetTruncation(options.truncate, options.truncate_left, &request);
    request.set_prompt_name(options.prompt_name);
    request.set_prompt(options.prompt);
    request.set_dimensions(options.dimensions);
    if (options.unnormalized) request.set_normalize_output(false);
    request.set_model(connection.model);

    grpc::ClientContext context;
    PrepareCall(connection, &context);
    encoder::v1::EncodeResponse response;
    const grpc::Status status = stub->Encode(&context, request, &response);
    if (!status.ok()) return ReportRpcError(status, err);
    const bool token_states = response.pooling() == encoder::v1::POOLING_NONE;
    for (const encoder::v1::Output& output : response.outputs()) {
      out << EncodeOutputToJson(output, token_states) << "\n";
    }
  }
  out.flush();
  return 0;
}

}  // namespace client
