// The special tokens a model's tokenizer wraps around one text and around a
// pair, learnt once per model from probe texts encoded with and without them
// (the post-processor's template is not otherwise exposed). Late chunking
// and window mode build their windows from these layouts.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"

namespace server::core {

// Before and after one text: [CLS] ... [SEP], <s> ... </s>.
struct Specials {
  std::vector<int32_t> before;
  std::vector<int32_t> after;
};
absl::StatusOr<Specials> SpecialsOf(const engine::Tokenizer& tokenizer);

// The pair template's special tokens (before, between, after) and token
// types, learnt from a probe pair encoded with and without them.
struct PairLayout {
  std::vector<int32_t> before, middle, after;
  std::vector<int32_t> before_types, middle_types, after_types;
  int32_t first_type = 0;
  int32_t second_type = 0;
};

absl::StatusOr<PairLayout> PairLayoutOf(const engine::Tokenizer& tokenizer);

}  // namespace server::core
