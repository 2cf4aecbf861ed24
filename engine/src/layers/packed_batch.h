// A batch packed without padding: sequence i owns token rows
// [offsets[i], offsets[i+1]) of every [tokens, width] activation buffer.
#pragma once

#include <cstdint>

#include "engine/token_rows.h"

namespace engine {

struct PackedBatch {
  const int* offsets = nullptr;  // num_sequences + 1 entries, offsets[0] == 0
  int num_sequences = 0;
  int64_t tokens = 0;
  // Per sequence, the keys every row attends to: [0, visible_keys[i]), 0 for
  // all (Sequence::visible_keys). Null: all keys of every sequence.
  const int* visible_keys = nullptr;
};

// The row sequence i keeps in a compact pass: its first (kFirst) or its
// last (kLast) token.
inline int64_t KeptRow(const PackedBatch& packed, TokenRows rows, int i) {
  return rows == TokenRows::kFirst ? packed.offsets[i] : packed.offsets[i + 1] - 1;
}

}  // namespace engine
