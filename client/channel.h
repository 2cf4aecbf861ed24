#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "client/client_options.h"

namespace client {

// An insecure channel to `options.target`, with its load-balancing policy
// and no limit on the size of responses (token states can be large). With
// `own_connection`, the channel shares no connection with other channels
// (bench spreads its calls over several connections this way).
std::shared_ptr<grpc::Channel> MakeChannel(const ConnectionOptions& options,
                                           bool own_connection = false);

// Sets the call's deadline from `options.timeout`.
void SetDeadline(const ConnectionOptions& options, grpc::ClientContext* context);

}  // namespace client
