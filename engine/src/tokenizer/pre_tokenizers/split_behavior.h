// How a word is cut at its delimiter matches (Hugging Face's
// SplitDelimiterBehavior), with the Rust crate's exact folding rules.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "normalized_text.h"

namespace engine::tokenizer {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

absl::StatusOr<SplitBehavior> ParseSplitBehavior(const std::string& name);

// `pieces` tile one word in order: (span, is a delimiter match). Appends the
// resulting non-empty words to *out.
void ApplySplitBehavior(const std::vector<std::pair<Span, bool>>& pieces, SplitBehavior behavior,
                        std::vector<Span>* out);

// Tiles [begin, end) into gaps and single-character matches of `is_delimiter`.
template <typename Pred>
void CharPieces(const std::vector<NormChar>& chars, Span word, Pred is_delimiter,
                std::vector<std::pair<Span, bool>>* pieces) {
  pieces->clear();
  uint32_t gap = word.begin;
  for (uint32_t i = word.begin; i < word.end; ++i) {
    if (!is_delimiter(chars[i].cp)) continue;
    if (gap < i) pieces->push_back({{gap, i}, false});
    pieces->push_back({{i, i + 1}, true});
    gap = i + 1;
  }
  if (gap < word.end) pieces->push_back({{gap, word.end}, false});
}

}  // namespace engine::tokenizer
