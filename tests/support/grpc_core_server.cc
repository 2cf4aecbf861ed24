#include "support/grpc_core_server.h"

#include <gtest/gtest.h>

namespace testing_support {

GrpcCoreServer::GrpcCoreServer(server::core::ModelHeads heads,
                               const std::vector<std::string>& api_keys)
    : core_(std::make_unique<CoreService>()), keys_(api_keys) {
  core_->SetHeads(std::move(heads));
  models_ = core_->Served("test", &keys_);
  server::GrpcOptions options;
  options.address = "127.0.0.1:0";
  auto server = server::GrpcServer::Start(options, models_.get(), server::core::SystemClock());
  EXPECT_TRUE(server.ok()) << "the gRPC server did not start: " << server.status();
  if (server.ok()) server_ = *std::move(server);
}

GrpcCoreServer::~GrpcCoreServer() = default;  // the server stops first (declared last)

}  // namespace testing_support
