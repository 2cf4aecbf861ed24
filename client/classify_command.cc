// encoder-client classify [texts...] [--pair]: one Classify call; one JSON
// line per input: {"scores": [{"id": 1, "label": "pos", "score": 0.9}, ...]}.
#include "client/commands.h"
#include "client/unary_call.h"

namespace client {

int RunClassify(const ConnectionOptions& connection, const ClassifyOptions& options,
                std::ostream& out, std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs = CollectCommandInputs(
      options.inputs, "classify needs texts (pairs with --pair) or --input FILE", err);
  if (!inputs) return 2;
  encoder::v1::ClassifyRequest request;
  request.set_model(connection.model);
  for (const encoder::v1::Input& input : *inputs) *request.add_inputs() = input;
  request.set_raw_scores(options.raw_scores);
  SetTruncation(options.truncate, options.truncate_left, &request);
  return CallAndPrintLines<encoder::v1::ClassifyResponse>(
      connection, &encoder::v1::Encoder::Stub::Classify, request,
      [](const encoder::v1::ClassifyResponse& response) { return response.predictions(); }, out,
      err);
}

}  // namespace client
