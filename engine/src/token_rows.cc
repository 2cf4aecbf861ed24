// The compact results of Encode (engine/token_rows.h): which token a kept
// row is, and the readers' refusal of what a compact result lacks.
#include "engine/token_rows.h"

#include "engine/encoder.h"

namespace engine {

const char* TokenRowsName(TokenRows rows) {
  switch (rows) {
    case TokenRows::kAll:
      return "all";
    case TokenRows::kFirst:
      return "first";
    case TokenRows::kLast:
      return "last";
  }
  return "?";
}

const float* EncodeResult::token_state(int i, int t) const {
  const int tokens = num_tokens(i);
  if (t < 0 || t >= tokens) return nullptr;
  const size_t h = static_cast<size_t>(hidden_size);
  switch (rows) {
    case TokenRows::kAll:
      return hidden_states.data() + (static_cast<size_t>(offsets[i]) + t) * h;
    case TokenRows::kFirst:
      return t == 0 ? hidden_states.data() + static_cast<size_t>(i) * h : nullptr;
    case TokenRows::kLast:
      return t == tokens - 1 ? hidden_states.data() + static_cast<size_t>(i) * h : nullptr;
  }
  return nullptr;
}

}  // namespace engine
