// What the one-call commands (classify, rerank, sparse) share: collecting
// their inputs with the usage error, the truncation fields, and one unary
// call whose repeated results are printed one JSON line each.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "client/channel.h"
#include "client/inputs.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

// The inputs `options` name; on an error, or none when `usage` says what the
// command needs, writes "encoder-client: ..." to `err` and returns nothing
// (the command then exits 2).
std::optional<std::vector<encoder::v1::Input>> CollectCommandInputs(const InputOptions& options,
                                                                    const char* usage,
                                                                    std::ostream& err);

// Sets a request's truncate (only when asked: unset, the server's
// --auto-truncate decides) and truncation direction.
template <typename Request>
void SetTruncation(bool truncate, bool truncate_left, Request* request) {
  if (truncate) request->set_truncate(true);
  if (truncate_left) request->set_truncation_direction(encoder::v1::TRUNCATION_DIRECTION_LEFT);
}

// Calls `method` (a member of encoder::v1::Encoder::Stub) once with
// `request`, then prints each element of results(response) as a JSON line.
// Returns the process exit code: 0, or ReportRpcError's.
template <typename Response, typename Request, typename Method, typename Results>
int CallAndPrintLines(const ConnectionOptions& connection, Method method, const Request& request,
                      Results results, std::ostream& out, std::ostream& err) {
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  Response response;
  const grpc::Status status = ((*stub).*method)(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  for (const auto& result : results(response)) out << MessageToJsonLine(result) << "\n";
  out.flush();
  return 0;
}

}  // namespace client
