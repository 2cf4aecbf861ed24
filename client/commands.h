// encoder-client's subcommands. Each returns the process exit status:
// 0 success, 1 a failed call (its gRPC status is printed on stderr), 2 a
// usage error. A later `bench` subcommand goes in its own file beside these.
#pragma once

#include <ostream>
#include <string>

#include "client/client_options.h"

namespace client {

int RunEncode(const ConnectionOptions& connection, const EncodeOptions& options, std::ostream& out,
              std::ostream& err);
int RunTokenize(const ConnectionOptions& connection, const InputOptions& inputs, bool truncate,
                std::ostream& out, std::ostream& err);
int RunInfo(const ConnectionOptions& connection, std::ostream& out, std::ostream& err);
// Exit 0 only when the server reports SERVING for `service` ("" = overall).
int RunHealth(const ConnectionOptions& connection, const std::string& service, std::ostream& out,
              std::ostream& err);

}  // namespace client
