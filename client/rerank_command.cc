// encoder-client rerank QUERY TEXT...: one Rerank call; one JSON line per
// ranked text, best first: {"index": 1, "score": 0.93, "text": ...}.
#include "client/commands.h"
#include "client/unary_call.h"

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
  request.set_instruction(options.instruction);
  request.set_raw_scores(options.raw_scores);
  SetTruncation(options.truncate, /*truncate_left=*/false, &request);
  return CallAndPrintLines<encoder::v1::RerankResponse>(
      connection, &encoder::v1::Encoder::Stub::Rerank, request,
      [](const encoder::v1::RerankResponse& response) { return response.results(); }, out, err);
}

}  // namespace client
