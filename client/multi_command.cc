// encoder-client multi [texts...]: one EncodeMulti call; one JSON line per
// input: {"dense": [...], "sparse": [{"id", "weight"}], "colbert": {"values",
// "rows", "cols"}, "tokens": n} with the outputs asked (--outputs).
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "client/commands.h"
#include "client/unary_call.h"

namespace client {

int RunMulti(const ConnectionOptions& connection, const MultiOptions& options, std::ostream& out,
             std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs =
      CollectCommandInputs(options.sparse.inputs, "multi needs texts, --input FILE or --ids", err);
  if (!inputs) return 2;
  if (options.sparse.max_active_dims < 0) {
    err << "encoder-client: --max_active_dims must be 0 (all) or more\n";
    return 2;
  }
  encoder::v1::EncodeMultiRequest request;
  request.set_model(connection.model);
  for (const absl::string_view name :
       absl::StrSplit(options.outputs, ',', absl::SkipWhitespace())) {
    encoder::v1::OutputKind kind;
    if (name == "dense") {
      kind = encoder::v1::OUTPUT_KIND_DENSE;
    } else if (name == "sparse") {
      kind = encoder::v1::OUTPUT_KIND_SPARSE;
    } else if (name == "colbert") {
      kind = encoder::v1::OUTPUT_KIND_COLBERT;
    } else {
      err << "encoder-client: --outputs takes dense, sparse and colbert, not \"" << name << "\"\n";
      return 2;
    }
    request.add_outputs(kind);
  }
  for (const encoder::v1::Input& input : *inputs) *request.add_inputs() = input;
  request.set_input_type(options.query ? encoder::v1::INPUT_TYPE_QUERY
                                       : encoder::v1::INPUT_TYPE_DOCUMENT);
  request.set_max_active_dims(options.sparse.max_active_dims);
  request.set_return_tokens(options.sparse.return_tokens);
  SetTruncation(options.sparse.truncate, options.sparse.truncate_left, &request);
  return CallAndPrintLines<encoder::v1::EncodeMultiResponse>(
      connection, &encoder::v1::Encoder::Stub::EncodeMulti, request,
      [](const encoder::v1::EncodeMultiResponse& response) { return response.outputs(); }, out,
      err);
}

}  // namespace client
