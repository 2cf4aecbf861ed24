// The gRPC adapter in-process on the service core with the fake engine
// (CoreService): the server's own listener (GrpcServer) on 127.0.0.1 (a free
// port), so that a test sets the model's heads and knows every number of a
// response without an engine. What the gRPC tests of the head RPCs call over
// a real socket.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/core/api/api_keys.h"
#include "server/grpc/grpc_server.h"
#include "support/core_service.h"

namespace testing_support {

class GrpcCoreServer {
 public:
  // Starts at once, the model with `heads` (set before the server's threads
  // start), API keys `api_keys` (none: authentication off); a start failure
  // fails the current test (ok() is false).
  explicit GrpcCoreServer(server::core::ModelHeads heads = {},
                          const std::vector<std::string>& api_keys = {});
  ~GrpcCoreServer();
  GrpcCoreServer(const GrpcCoreServer&) = delete;
  GrpcCoreServer& operator=(const GrpcCoreServer&) = delete;

  bool ok() const { return server_ != nullptr; }
  int port() const { return server_->port(); }
  CoreService& core() { return *core_; }
  server::GrpcServer& server() { return *server_; }

 private:
  std::unique_ptr<CoreService> core_;
  server::core::ApiKeys keys_;
  std::unique_ptr<server::core::ServedModels> models_;
  std::unique_ptr<server::GrpcServer> server_;
};

}  // namespace testing_support
