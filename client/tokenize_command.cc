// encoder-client tokenize: one Tokenize call per text (or pair), one JSON
// line each.
#include "client/commands.h"
#include "client/unary_call.h"

namespace client {

int RunTokenize(const ConnectionOptions& connection, const InputOptions& input_options,
                bool truncate, std::ostream& out, std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs =
      CollectCommandInputs(input_options, "tokenize needs texts or --input FILE", err);
  if (!inputs) return 2;
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  for (const encoder::v1::Input& input : *inputs) {
    encoder::v1::TokenizeRequest request;
    request.set_model(connection.model);
    request.set_truncate(truncate);
    if (input.has_text_pair()) {
      request.set_text(input.text_pair().text());
      request.set_text_pair(input.text_pair().text_pair());
    } else if (input.kind_case() == encoder::v1::Input::kText) {
      request.set_text(input.text());
    } else {
      err << "encoder-client: tokenize takes texts, not ids\n";
      return 2;
    }
    grpc::ClientContext context;
    PrepareCall(connection, &context);
    encoder::v1::TokenizeResponse response;
    const grpc::Status status = stub->Tokenize(&context, request, &response);
    if (!status.ok()) return ReportRpcError(status, err);
    out << TokenizeResponseToJson(response) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace client
