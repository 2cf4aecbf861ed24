// The input tokenizer (server/core/requests/input_tokenizer.h) over a small random model, as the
// request-parsing targets (gRPC messages, HTTP bodies) check what they parse against it.
#pragma once

#include <memory>

#include "server/core/model/model_loader.h"
#include "server/core/requests/plans.h"

namespace fuzz {

struct Service {
  server::core::LoadedModel model;
  std::unique_ptr<server::core::InputTokenizer> inputs;
};

// Made once per process, in ProcessTempDir(prefix).
const Service& GetService(const char* prefix);

}  // namespace fuzz
