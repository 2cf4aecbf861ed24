#include "server/grpc/unary_call.h"

namespace server {

absl::string_view Authorization(grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

}  // namespace server
