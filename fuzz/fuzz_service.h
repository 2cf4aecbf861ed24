// The request builder over a small random model, as the request-parsing
// targets (gRPC messages, HTTP bodies) check what they parse against it.
#pragma once

#include <memory>

#include "server/core/model/model_loader.h"
#include "server/core/requests/request_builder.h"

namespace fuzz {

struct Service {
  server::LoadedModel model;
  std::unique_ptr<server::RequestBuilder> builder;
};

// Made once per process, in ProcessTempDir(prefix).
const Service& GetService(const char* prefix);

}  // namespace fuzz
