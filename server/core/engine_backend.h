// The batcher's backend on the real engine: one Encode per batch, then one
// Pool per input, or a copy of the token states for kNone.
#pragma once

#include <vector>

#include "engine/encoder.h"
#include "server/core/backend.h"

namespace server {

class EngineBackend : public Backend {
 public:
  explicit EngineBackend(engine::Encoder* encoder) : encoder_(encoder) {}

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override;

 private:
  engine::Encoder* const encoder_;
  engine::EncodeResult result_;  // reused across batches: its buffers stay allocated
};

}  // namespace server
