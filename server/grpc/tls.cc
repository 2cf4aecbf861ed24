#include "server/grpc/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <grpcpp/security/server_credentials.h>

#include "absl/strings/str_cat.h"

namespace server {
namespace {

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyDeleter>;

// "--tls-cert /etc/tls/tls.crt"
std::string Name(const char* flag, const std::string& path) {
  return absl::StrCat("--", flag, " ", path);
}

// OpenSSL's reason for the last failure, as " (reason)", and clears its queue.
std::string OpenSslReason() {
  const unsigned long error = ERR_peek_last_error();
  std::string reason;
  if (error != 0) {
    const char* text = ERR_reason_error_string(error);
    if (text != nullptr) reason = absl::StrCat(" (", text, ")");
  }
  ERR_clear_error();
  return reason;
}

absl::StatusOr<std::string> ReadPemFile(const char* flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(flag, path), ": cannot read the file (", std::strerror(errno), ")"));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(Name(flag, path), ": cannot read the file"));
  }
  return contents.str();
}

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate in `pem`, in order; an error when there is none or one
// is malformed.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(const char* flag, const std::string& path,
                                                       const std::string& pem) {
  ERR_clear_error();
  BioPtr bio = MemoryBio(pem);
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  // Reading stops at the end of the data ("no start line") or at a broken block.
  const unsigned long error = ERR_peek_last_error();
  const bool clean_end =
      ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  if (error != 0 && !clean_end) {
    return absl::InvalidArgumentError(absl::StrCat(Name(flag, path),
                                                   ": a malformed PEM certificate after ",
                                                   certs.size(), " good ones", OpenSslReason()));
  }
  ERR_clear_error();
  if (certs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(flag, path), ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it"));
  }
  return certs;
}

// Never asks for a passphrase (on a terminal, OpenSSL's default would).
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return 0; }

absl::StatusOr<KeyPtr> ParsePrivateKey(const char* flag, const std::string& path,
                                       const std::string& pem) {
  ERR_clear_error();
  BioPtr bio = MemoryBio(pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(flag, path), ": no usable PEM private key in it (an encrypted key is not supported)",
        OpenSslReason()));
  }
  return key;
}

}  // namespace

absl::StatusOr<ServerTlsPem> LoadServerTls(const TlsFiles& files) {
  ServerTlsPem pem;
  if (files.cert.empty()) return pem;

  absl::StatusOr<std::string> cert_chain = ReadPemFile("tls-cert", files.cert);
  if (!cert_chain.ok()) return cert_chain.status();
  absl::StatusOr<std::vector<X509Ptr>> certs =
      ParseCertificates("tls-cert", files.cert, *cert_chain);
  if (!certs.ok()) return certs.status();

  absl::StatusOr<std::string> private_key = ReadPemFile("tls-key", files.key);
  if (!private_key.ok()) return private_key.status();
  absl::StatusOr<KeyPtr> key = ParsePrivateKey("tls-key", files.key, *private_key);
  if (!key.ok()) return key.status();
  // The first certificate is the server's own; its key must be this one.
  if (X509_check_private_key(certs->front().get(), key->get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(Name("tls-key", files.key),
                                                   " does not match the certificate in ",
                                                   Name("tls-cert", files.cert), OpenSslReason()));
  }

  if (!files.client_ca.empty()) {
    absl::StatusOr<std::string> client_ca = ReadPemFile("tls-client-ca", files.client_ca);
    if (!client_ca.ok()) return client_ca.status();
    absl::StatusOr<std::vector<X509Ptr>> roots =
        ParseCertificates("tls-client-ca", files.client_ca, *client_ca);
    if (!roots.ok()) return roots.status();
    pem.client_ca = *std::move(client_ca);
  }
  pem.cert_chain = *std::move(cert_chain);
  pem.private_key = *std::move(private_key);
  return pem;
}

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const ServerTlsPem& pem) {
  if (pem.cert_chain.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      pem.client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = pem.client_ca;
  options.pem_key_cert_pairs.push_back({pem.private_key, pem.cert_chain});
  return grpc::SslServerCredentials(options);
}

}  // namespace server
