// TLS on the gRPC port, over a real socket on 127.0.0.1, with certificates
// made at run time by make_test_certs.sh (openssl): a CA, a server
// certificate for localhost / 127.0.0.1, a client certificate by the CA, and
// a second, untrusted CA with its own client certificate. The clients are
// encoder-client's (client::MakeChannel), so its TLS flags are tested too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "client/channel.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/app/encoder_server.h"
#include "server/app/server_config.h"
#include "server/grpc/tls.h"
#include "support/files.h"
#include "support/test_server.h"

#ifndef MAKE_TEST_CERTS_SCRIPT
#error "MAKE_TEST_CERTS_SCRIPT must name tests/server/make_test_certs.sh"
#endif

namespace server {
namespace {

using std::chrono::seconds;
using testing_support::ReadFile;
using testing_support::TempDir;
using testing_support::TestModel;
using testing_support::TestServerSuite;
using testing_support::WriteFile;

// A fresh directory of certificates, removed with the result; null (and a
// failure) when openssl fails.
std::unique_ptr<TempDir> MakeCertificates() {
  auto dir = std::make_unique<TempDir>("encoder_tls_test_");
  const std::string command =
      std::string("bash '") + MAKE_TEST_CERTS_SCRIPT + "' '" + dir->path() + "'";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << "making test certificates failed: " << command;
    return nullptr;
  }
  return dir;
}

// One Encode call and one health check; the first failure, or OK.
grpc::Status EncodeAndCheckHealth(const client::ConnectionOptions& options) {
  std::shared_ptr<grpc::Channel> channel = client::MakeChannel(options);
  auto stub = encoder::v1::Encoder::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(20));
  encoder::v1::EncodeRequest request;
  request.add_inputs()->set_text("hello over tls");
  encoder::v1::EncodeResponse response;
  grpc::Status status = stub->Encode(&context, request, &response);
  if (!status.ok()) return status;
  EXPECT_EQ(response.outputs_size(), 1);
  EXPECT_EQ(response.outputs(0).cols(), TestModel::kHidden);

  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext health_context;
  health_context.set_deadline(std::chrono::system_clock::now() + seconds(20));
  grpc::health::v1::HealthCheckResponse health_response;
  status = health->Check(&health_context, {}, &health_response);
  if (status.ok()) {
    EXPECT_EQ(health_response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  return status;
}

// A server with TLS (mutual when kMutual) for the whole suite.
template <bool kMutual>
class TlsServerTest : public TestServerSuite {
 protected:
  static void SetUpTestSuite() {
    certs_ = MakeCertificates().release();
    if (certs_ == nullptr) return;
    StartSuiteServer([](ServerConfig& config) {
      config.tls_cert = Cert("server.pem");
      config.tls_key = Cert("server.key");
      if (kMutual) config.tls_client_ca = Cert("ca.pem");
    });
  }
  static void TearDownTestSuite() {
    TestServerSuite::TearDownTestSuite();
    delete certs_;
    certs_ = nullptr;
  }

  static std::string Cert(const std::string& name) { return certs_->path() + "/" + name; }

  // encoder-client's options for 127.0.0.1:port with these TLS flags.
  static client::ConnectionOptions Options(const client::TlsFiles& files,
                                           const std::string& host = "127.0.0.1") {
    client::ConnectionOptions options;
    options.target = host + ":" + std::to_string(suite_server().port());
    options.timeout = seconds(20);
    absl::StatusOr<client::TlsOptions> tls = client::LoadTlsFiles(files);
    EXPECT_TRUE(tls.ok()) << tls.status();
    if (tls.ok()) options.tls = *tls;
    return options;
  }

  static TempDir* certs_;
};

template <bool kMutual>
TempDir* TlsServerTest<kMutual>::certs_ = nullptr;

using TlsTest = TlsServerTest<false>;
using MutualTlsTest = TlsServerTest<true>;

TEST_F(TlsTest, AClientTrustingTheCaEncodesAndChecksHealth) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();

  // The certificate's other name, and --tls-server-name for a name the target lacks.
  status = EncodeAndCheckHealth(Options(files, "localhost"));
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  files.server_name = "localhost";
  status = EncodeAndCheckHealth(Options(files));
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
}

TEST_F(TlsTest, TheServerNameIsChecked) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  files.server_name = "not-the-server.example";
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(TlsTest, AClientTrustingAnotherCaIsRefused) {
  client::TlsFiles files;
  files.ca = Cert("other-ca.pem");
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(TlsTest, APlaintextClientFails) {
  const grpc::Status status = EncodeAndCheckHealth(Options(client::TlsFiles{}));
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(TlsTest, AClientCertificateIsNotNeededWithoutMutualTls) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  files.cert = Cert("other-client.pem");  // not checked: the server does not ask for one
  files.key = Cert("other-client.key");
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
}

TEST_F(MutualTlsTest, AClientWithACertificateByTheCaWorks) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  files.cert = Cert("client.pem");
  files.key = Cert("client.key");
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
}

TEST_F(MutualTlsTest, AClientWithoutACertificateIsRefused) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(MutualTlsTest, AClientWithACertificateByAnotherCaIsRefused) {
  client::TlsFiles files;
  files.ca = Cert("ca.pem");
  files.cert = Cert("other-client.pem");
  files.key = Cert("other-client.key");
  const grpc::Status status = EncodeAndCheckHealth(Options(files));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(MutualTlsTest, APlaintextClientIsRefused) {
  const grpc::Status status = EncodeAndCheckHealth(Options(client::TlsFiles{}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

// Bad files are one line naming the flag and the file, before the model
// loads and before anything listens.
class TlsStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = MakeCertificates();
    ASSERT_NE(certs_, nullptr);
    WriteFile(Cert("garbage.pem"), "this is not PEM\n");
    const std::string server_pem = ReadFile(Cert("server.pem"));
    WriteFile(Cert("truncated.pem"), server_pem.substr(0, server_pem.size() / 2));
  }
  std::string Cert(const std::string& name) const { return certs_->path() + "/" + name; }

  // A TLS config on a model directory that does not exist: a TLS error
  // proves the files are checked before the model loads.
  ServerConfig Config(const std::string& cert, const std::string& key,
                      const std::string& client_ca = "") const {
    ServerConfig config = testing_support::TestServerConfig("/nonexistent/model");
    config.tls_cert = cert;
    config.tls_key = key;
    config.tls_client_ca = client_ca;
    return config;
  }

  static std::string StartError(const ServerConfig& config) {
    auto server = EncoderServer::Start(config);
    EXPECT_FALSE(server.ok());
    if (server.ok()) return "";
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
    EXPECT_EQ(server.status().message().find('\n'), absl::string_view::npos);
    return std::string(server.status().message());
  }

  std::unique_ptr<TempDir> certs_;
};

TEST_F(TlsStartTest, GoodFilesLoad) {
  ServerConfig config = Config(Cert("server.pem"), Cert("server.key"), Cert("ca.pem"));
  absl::StatusOr<ServerTlsPem> pem =
      LoadServerTls(TlsFiles{config.tls_cert, config.tls_key, config.tls_client_ca});
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(pem->cert_chain, ReadFile(Cert("server.pem")));
  EXPECT_EQ(pem->private_key, ReadFile(Cert("server.key")));
  EXPECT_EQ(pem->client_ca, ReadFile(Cert("ca.pem")));
  EXPECT_STREQ(TransportSecurityName(config), "mutual TLS");
  config.tls_client_ca.clear();
  EXPECT_STREQ(TransportSecurityName(config), "TLS");
  config.tls_cert.clear();
  EXPECT_STREQ(TransportSecurityName(config), "plaintext");
}

TEST_F(TlsStartTest, BadFilesAreOneLineNamingTheFlagAndTheFile) {
  EXPECT_EQ(StartError(Config("/nonexistent/server.pem", Cert("server.key"))),
            "--tls-cert /nonexistent/server.pem: cannot read the file (No such file or "
            "directory)");
  EXPECT_EQ(StartError(Config(Cert("garbage.pem"), Cert("server.key"))),
            "--tls-cert " + Cert("garbage.pem") +
                ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
  // A key where the certificate belongs.
  EXPECT_EQ(StartError(Config(Cert("server.key"), Cert("server.key"))),
            "--tls-cert " + Cert("server.key") +
                ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
  EXPECT_NE(StartError(Config(Cert("truncated.pem"), Cert("server.key")))
                .find("--tls-cert " + Cert("truncated.pem") + ": "),
            std::string::npos);

  EXPECT_EQ(StartError(Config(Cert("server.pem"), "/nonexistent/server.key")),
            "--tls-key /nonexistent/server.key: cannot read the file (No such file or "
            "directory)");
  EXPECT_NE(StartError(Config(Cert("server.pem"), Cert("garbage.pem")))
                .find("--tls-key " + Cert("garbage.pem") + ": no usable PEM private key in it"),
            std::string::npos);
  EXPECT_NE(StartError(Config(Cert("server.pem"), Cert("client.key")))
                .find("--tls-key " + Cert("client.key") +
                      " does not match the certificate in --tls-cert " + Cert("server.pem")),
            std::string::npos);

  EXPECT_EQ(StartError(Config(Cert("server.pem"), Cert("server.key"), "/nonexistent/ca.pem")),
            "--tls-client-ca /nonexistent/ca.pem: cannot read the file (No such file or "
            "directory)");
  EXPECT_EQ(StartError(Config(Cert("server.pem"), Cert("server.key"), Cert("garbage.pem"))),
            "--tls-client-ca " + Cert("garbage.pem") +
                ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
}

TEST_F(TlsStartTest, TheFlagsGoTogether) {
  EXPECT_EQ(StartError(Config(Cert("server.pem"), "")),
            "--tls-cert needs --tls-key (the certificate's private key)");
  EXPECT_EQ(StartError(Config("", Cert("server.key"))),
            "--tls-key needs --tls-cert (the certificate it belongs to)");
  EXPECT_EQ(StartError(Config("", "", Cert("ca.pem"))),
            "--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key (the server's own "
            "certificate)");
  EXPECT_EQ(ValidateServerConfig(Config("", "", Cert("ca.pem"))).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TlsStartTest, TheClientReadsItsFilesAndNamesTheBadOne) {
  client::TlsFiles files;
  absl::StatusOr<client::TlsOptions> tls = client::LoadTlsFiles(files);
  ASSERT_TRUE(tls.ok());
  EXPECT_FALSE(tls->enabled);

  files.tls = true;
  tls = client::LoadTlsFiles(files);
  ASSERT_TRUE(tls.ok());
  EXPECT_TRUE(tls->enabled);
  EXPECT_TRUE(tls->root_certs.empty());  // the system's roots

  files = {};
  files.ca = Cert("ca.pem");
  files.cert = Cert("client.pem");
  files.key = Cert("client.key");
  files.server_name = "localhost";
  tls = client::LoadTlsFiles(files);
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_TRUE(tls->enabled);
  EXPECT_EQ(tls->root_certs, ReadFile(Cert("ca.pem")));
  EXPECT_EQ(tls->cert_chain, ReadFile(Cert("client.pem")));
  EXPECT_EQ(tls->private_key, ReadFile(Cert("client.key")));
  EXPECT_EQ(tls->server_name, "localhost");

  files.key.clear();
  EXPECT_EQ(client::LoadTlsFiles(files).status().message(),
            "--tls-cert and --tls-key go together (the client certificate and its key)");
  files = {};
  files.ca = "/nonexistent/ca.pem";
  EXPECT_EQ(client::LoadTlsFiles(files).status().message(),
            "--tls-ca /nonexistent/ca.pem: cannot read the file (No such file or directory)");
  files.ca = Cert("garbage.pem");
  EXPECT_EQ(client::LoadTlsFiles(files).status().message(),
            "--tls-ca " + Cert("garbage.pem") + ": not a PEM file (no -----BEGIN line)");
}

}  // namespace
}  // namespace server
