#include "support/grpc_core_server.h"

#include <gtest/gtest.h>

namespace testing_support {

GrpcCoreServer::GrpcCoreServer(server::ModelHeads heads) : core_(std::make_unique<CoreService>()) {
  core_->SetHeads(std::move(heads));
  models_ = core_->Served("test", &keys_);
  service_ = std::make_unique<server::EncodeService>(models_.get(), server::SystemClock());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  EXPECT_TRUE(ok()) << "the gRPC server did not start";
}

GrpcCoreServer::~GrpcCoreServer() {
  if (server_ != nullptr) server_->Shutdown();
}

}  // namespace testing_support
