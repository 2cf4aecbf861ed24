// A batch packed without padding: sequence i owns token rows
// [offsets[i], offsets[i+1]) of every [tokens, width] activation buffer.
#pragma once

#include <cstdint>

namespace engine {

struct PackedBatch {
  const int* offsets = nullptr;  // num_sequences + 1 entries, offsets[0] == 0
  int num_sequences = 0;
  int64_t tokens = 0;
};

}  // namespace engine
