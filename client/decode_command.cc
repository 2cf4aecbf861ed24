// encoder-client decode: token ids back to text (one Decode call per --ids
// or --input line with "ids"), one JSON line each: {"text": ...}.
#include "client/channel.h"
#include "client/commands.h"
#include "client/inputs.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace client {

int RunDecode(const ConnectionOptions& connection, const InputOptions& input_options,
              bool keep_special_tokens, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<encoder::v1::Input>> inputs = CollectInputs(input_options);
  if (!inputs.ok()) {
    err << "encoder-client: " << inputs.status().message() << "\n";
    return 2;
  }
  if (inputs->empty()) {
    err << "encoder-client: decode needs --ids or --input FILE with {\"ids\": [...]}\n";
    return 2;
  }
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  for (const encoder::v1::Input& input : *inputs) {
    if (input.kind_case() != encoder::v1::Input::kTokenIds) {
      err << "encoder-client: decode takes ids, not texts\n";
      return 2;
    }
    encoder::v1::DecodeRequest request;
    request.set_model(connection.model);
    *request.mutable_ids() = input.token_ids().ids();
    request.set_keep_special_tokens(keep_special_tokens);
    grpc::ClientContext context;
    PrepareCall(connection, &context);
    encoder::v1::DecodeResponse response;
    const grpc::Status status = stub->Decode(&context, request, &response);
    if (!status.ok()) return ReportRpcError(status, err);
    out << nlohmann::json{{"text", response.text()}}.dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace)
        << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace client
