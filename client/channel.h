#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

#include "client/client_options.h"

namespace client {

// The paths given as encoder-client's TLS flags.
struct TlsFiles {
  bool tls = false;         // --tls: TLS with the system's roots
  std::string ca;           // --tls-ca
  std::string cert;         // --tls-cert
  std::string key;          // --tls-key
  std::string server_name;  // --tls-server-name
};

// Reads the files into TlsOptions. Any of them (or --tls) turns TLS on;
// --tls-cert and --tls-key go together. INVALID_ARGUMENT naming the flag and
// the file when one cannot be read or is not PEM.
absl::StatusOr<TlsOptions> LoadTlsFiles(const TlsFiles& files);

// A channel to `options.target` (plaintext, or TLS per `options.tls`), with
// its load-balancing policy and no limit on the size of responses (token
// states can be large). With
// `own_connection`, the channel shares no connection with other channels
// (bench spreads its calls over several connections this way).
std::shared_ptr<grpc::Channel> MakeChannel(const ConnectionOptions& options,
                                           bool own_connection = false);

// Sets the call's deadline from `options.timeout` and its API key.
void PrepareCall(const ConnectionOptions& options, grpc::ClientContext* context);

}  // namespace client
