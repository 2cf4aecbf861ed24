// encoder-client rerank QUERY TEXT...: one Rerank call; one JSON line per
// ranked text, best first: {"index": 1, "score": 0.93, "text": ...}.
#include "client/channel.h"
#include "client/commands.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

int RunRerank(const ConnectionOptions& connection, const RerankOptions& options, std::ostream& out,
              std::ostream& err) {
  if (options.query.empty() || options.texts.empty()) {
    err << "encoder-client: rerank needs a query and at least one text: rerank QUERY TEXT...\n";
    return 2;
  }
  if (options.top_n < 0) {
    err << "encoder-client: --top_n must be 1 or more (0: all)\n";
    return 2;
  }
  encoder::v1::RerankRequest request;
  request.set_model(connection.model);
  request.set_query(options.query);
  for (const std::string& text : options.texts) request.add_texts(text);
  if (options.top_n > 0) request.set_top_n(options.top_n);
  request.set_return_text(options.return_text);
  request.set_raw_scores(options.raw_scores);
  if (options.truncate) request.set_truncate(true);
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  encoder::v1::RerankResponse response;
  const grpc::Status status = stub->Rerank(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  for (const encoder::v1::RerankResult& result : response.results()) {
    out << MessageToJsonLine(result) << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace client
