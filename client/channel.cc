#include "client/channel.h"

namespace client {

std::shared_ptr<grpc::Channel> MakeChannel(const ConnectionOptions& options, bool own_connection) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.lb.empty()) args.SetLoadBalancingPolicyName(options.lb);
  return grpc::CreateCustomChannel(options.target, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(const ConnectionOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + options.timeout);
}

}  // namespace client
