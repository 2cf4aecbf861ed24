#include "pre_tokenizers/split_behavior.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace engine::tokenizer {

absl::StatusOr<SplitBehavior> ParseSplitBehavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  return absl::InvalidArgumentError(absl::StrCat("unknown split behavior \"", name, "\""));
}

void ApplySplitBehavior(const std::vector<std::pair<Span, bool>>& pieces, SplitBehavior behavior,
                        std::vector<Span>* out) {
  std::vector<std::pair<Span, bool>> acc;  // (span, removed)
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      acc = pieces;
      break;
    case SplitBehavior::kIsolated:
      for (const auto& [span, match] : pieces) acc.push_back({span, false});
      break;
    case SplitBehavior::kContiguous:
      for (const auto& [span, match] : pieces) {
        if (match == previous_match && !acc.empty()) {
          acc.back().first.end = span.end;
        } else {
          acc.push_back({span, false});
        }
        previous_match = match;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& [span, match] : pieces) {
        if (match && !previous_match && !acc.empty()) {
          acc.back().first.end = span.end;
        } else {
          acc.push_back({span, false});
        }
        previous_match = match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (size_t k = pieces.size(); k-- > 0;) {
        const auto& [span, match] = pieces[k];
        if (match && !previous_match && !acc.empty()) {
          acc.back().first.begin = span.begin;
        } else {
          acc.push_back({span, false});
        }
        previous_match = match;
      }
      std::reverse(acc.begin(), acc.end());
      break;
  }
  for (const auto& [span, removed] : acc) {
    if (!removed && span.begin < span.end) out->push_back(span);
  }
}

}  // namespace engine::tokenizer
