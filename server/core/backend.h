// The batcher's view of the engine: run one packed batch of sequences and
// produce one output per input. Knows nothing of gRPC. The real backend
// wraps engine::Encoder; tests use a fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "engine/encoder.h"

namespace server {

// What a request wants back for each of its inputs.
struct OutputSpec {
  engine::Pooling pooling = engine::Pooling::kCls;  // kNone: all token states
  bool normalize = false;  // L2; applies to pooled vectors and to each token state
};

// One input's result: `rows` x `cols` floats (rows == 1 when pooled, rows ==
// tokens for kNone) and the number of tokens the input used.
struct InputOutput {
  int rows = 0;
  int cols = 0;
  int tokens = 0;
  std::vector<float> values;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Runs `batch` (one engine call) and writes outputs[i] for batch[i] as
  // specs[i] asks. Called from one batcher thread at a time.
  virtual absl::Status Run(absl::Span<const engine::Sequence> batch,
                           absl::Span<const OutputSpec> specs,
                           std::vector<InputOutput>* outputs) = 0;
  // How long the last Run waited for its turn on an engine shared with other
  // models (engine_turns.h): part of the batch's wall time, not engine time.
  // Zero for a backend of its own.
  virtual std::chrono::nanoseconds last_turn_wait() const { return {}; }
};

}  // namespace server
