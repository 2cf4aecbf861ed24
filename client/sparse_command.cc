// encoder-client sparse [texts...]: one EncodeSparse call; one JSON line per
// input: {"entries": [{"id": 2054, "weight": 1.7, "token": "what"}, ...]}.
#include "client/commands.h"
#include "client/unary_call.h"

namespace client {

int RunSparse(const ConnectionOptions& connection, const SparseOptions& options, std::ostream& out,
              std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs =
      CollectCommandInputs(options.inputs, "sparse needs texts, --input FILE or --ids", err);
  if (!inputs) return 2;
  if (options.max_active_dims < 0) {
    err << "encoder-client: --max_active_dims must be 0 (all) or more\n";
    return 2;
  }
  encoder::v1::EncodeSparseRequest request;
  request.set_model(connection.model);
  for (const encoder::v1::Input& input : *inputs) *request.add_inputs() = input;
  request.set_max_active_dims(options.max_active_dims);
  request.set_return_tokens(options.return_tokens);
  SetTruncation(options.truncate, options.truncate_left, &request);
  return CallAndPrintLines<encoder::v1::EncodeSparseResponse>(
      connection, &encoder::v1::Encoder::Stub::EncodeSparse, request,
      [](const encoder::v1::EncodeSparseResponse& response) { return response.embeddings(); }, out,
      err);
}

}  // namespace client
