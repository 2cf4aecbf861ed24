#include "truncation.h"

#include <algorithm>

namespace engine::tokenizer {

void TruncateLongestFirst(int max_length, int num_special, int* len_a, int* len_b) {
  const int budget = max_length - num_special;
  if (*len_b < 0) {
    *len_a = std::min(*len_a, budget);
    return;
  }
  if (*len_a + *len_b <= budget) return;
  // Give the shorter text all it needs up to the budget, the longer the rest;
  // if both are too long, split the budget (the odd token to the longer one).
  const bool swapped = *len_a > *len_b;
  int shorter = swapped ? *len_b : *len_a;
  int longer = shorter > budget ? shorter : std::max(shorter, budget - shorter);
  if (shorter + longer > budget) {
    shorter = budget / 2;
    longer = shorter + budget % 2;
  }
  *len_a = swapped ? longer : shorter;
  *len_b = swapped ? shorter : longer;
}

int TokensBeforeEarlyExit(const std::vector<Piece>& pieces, int max_length, TruncationSide side) {
  const int n = static_cast<int>(pieces.size());
  const bool from_left = side == TruncationSide::kRight;
  int total = 0;
  for (int k = 0; k < n;) {
    // One pre-token (or added token): the pieces that share its split index.
    const Piece& first = pieces[from_left ? k : n - 1 - k];
    int count = 0;
    while (k < n && pieces[from_left ? k : n - 1 - k].split == first.split) {
      ++count;
      ++k;
    }
    total += count;
    if (!first.added && total >= max_length) return total;
  }
  return total;
}

}  // namespace engine::tokenizer
