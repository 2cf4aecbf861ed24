#include "support/grpc_core_server.h"

#include <gtest/gtest.h>

namespace testing_support {

GrpcCoreServer::GrpcCoreServer(server::ModelHeads heads)
    : core_(std::make_unique<CoreService>()),
      service_(std::make_unique<server::EncodeService>(&core_->dispatcher(), &keys_,
                                                       encoder::v1::ModelInfo(),
                                                       server::SystemClock(), &core_->metrics())) {
  core_->SetHeads(std::move(heads));
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
