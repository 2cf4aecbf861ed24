#include "client/channel.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace client {
namespace {

// The file's contents, which must hold a PEM block ("-----BEGIN "); gRPC
// checks the rest when it connects.
absl::Status ReadPem(const char* flag, const std::string& path, std::string* contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", path, ": cannot read the file (", std::strerror(errno), ")"));
  }
  std::ostringstream bytes;
  bytes << file.rdbuf();
  *contents = bytes.str();
  if (contents->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", path, ": not a PEM file (no -----BEGIN line)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsOptions> LoadTlsFiles(const TlsFiles& files) {
  TlsOptions tls;
  tls.enabled = files.tls || !files.ca.empty() || !files.cert.empty() || !files.key.empty() ||
                !files.server_name.empty();
  tls.server_name = files.server_name;
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together (the client certificate and its key)");
  }
  for (auto [flag, path, contents] : {std::tuple{"tls-ca", &files.ca, &tls.root_certs},
                                      std::tuple{"tls-cert", &files.cert, &tls.cert_chain},
                                      std::tuple{"tls-key", &files.key, &tls.private_key}}) {
    if (path->empty()) continue;
    RETURN_IF_ERROR(ReadPem(flag, *path, contents));
  }
  return tls;
}

std::shared_ptr<grpc::Channel> MakeChannel(const ConnectionOptions& options, bool own_connection) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.lb.empty()) args.SetLoadBalancingPolicyName(options.lb);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls.root_certs;  // empty: gRPC's default (system) roots
    ssl.pem_cert_chain = options.tls.cert_chain;
    ssl.pem_private_key = options.tls.private_key;
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls.server_name.empty()) args.SetSslTargetNameOverride(options.tls.server_name);
  }
  return grpc::CreateCustomChannel(options.target, credentials, args);
}

void PrepareCall(const ConnectionOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + options.timeout);
  if (!options.api_key.empty()) context->AddMetadata("authorization", "Bearer " + options.api_key);
}

}  // namespace client
