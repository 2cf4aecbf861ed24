// TLS for the gRPC port: reads the PEM files named by the --tls-* flags and
// checks them with OpenSSL before the server listens, so that a missing file,
// a file that is not PEM, or a key that does not belong to the certificate is
// one line naming the flag and the file (gRPC itself would only fail to
// listen, or fail each handshake later).
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"

namespace server {

// The PEM contents; all empty for plaintext.
struct ServerTlsPem {
  std::string cert_chain;   // --tls-cert: the server's certificate, then any intermediates
  std::string private_key;  // --tls-key
  std::string client_ca;    // --tls-client-ca: roots that client certificates must chain to
};

// The PEM files' paths (--tls-cert, --tls-key, --tls-client-ca); no
// certificate means plaintext.
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string client_ca;
};

// Reads and checks the files (the combination is ValidateServerConfig's job). INVALID_ARGUMENT
// naming the flag and the file: unreadable, no PEM certificate / private key in it, or the key does
// not match the certificate.
absl::StatusOr<ServerTlsPem> LoadServerTls(const TlsFiles& files);

// Insecure credentials when `pem` has no certificate; TLS; mutual TLS (client
// certificates required and verified against `pem.client_ca`) when it has one.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const ServerTlsPem& pem);

}  // namespace server
