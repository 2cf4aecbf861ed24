// encoder-client's subcommands. Each returns the process exit status:
// 0 success, 1 a failed call (its gRPC status is printed on stderr), 2 a
// usage error.
#pragma once

#include <ostream>
#include <string>

#include "client/bench_options.h"
#include "client/client_options.h"

namespace client {

int RunEncode(const ConnectionOptions& connection, const EncodeOptions& options, std::ostream& out,
              std::ostream& err);
int RunTokenize(const ConnectionOptions& connection, const InputOptions& inputs, bool truncate,
                std::ostream& out, std::ostream& err);
// Ids back to text; special tokens are left out unless `keep_special_tokens`.
int RunDecode(const ConnectionOptions& connection, const InputOptions& inputs,
              bool keep_special_tokens, std::ostream& out, std::ostream& err);
// The head RPCs: one JSON line per result (rerank: per ranked text, best
// first; classify: per input, its labels by score; sparse: per input).
int RunRerank(const ConnectionOptions& connection, const RerankOptions& options, std::ostream& out,
              std::ostream& err);
int RunClassify(const ConnectionOptions& connection, const ClassifyOptions& options,
                std::ostream& out, std::ostream& err);
int RunSparse(const ConnectionOptions& connection, const SparseOptions& options, std::ostream& out,
              std::ostream& err);
// EncodeMulti: one JSON line per input with the outputs asked.
int RunMulti(const ConnectionOptions& connection, const MultiOptions& options, std::ostream& out,
             std::ostream& err);
int RunInfo(const ConnectionOptions& connection, std::ostream& out, std::ostream& err);
// Exit 0 only when the server reports SERVING for `service` ("" = overall).
int RunHealth(const ConnectionOptions& connection, const std::string& service, std::ostream& out,
              std::ostream& err);
// A load test of Encode (see bench_options.h); the report goes to `out`.
// Exit 0 when the run completed with at least one successful call, failed
// calls included; 1 when no call succeeded.
int RunBench(const ConnectionOptions& connection, const BenchOptions& options, std::ostream& out,
             std::ostream& err);

}  // namespace client
