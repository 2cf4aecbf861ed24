// Leftmost-longest search for a set of strings (the added tokens), as the
// crate's AddedVocabulary does with aho-corasick's LeftmostLongest: the
// match that starts first, and of those the longest.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace engine::tokenizer {

// Over code units of CharT: bytes of the input, or code points of the
// normalized text. The patterns form a trie, so that a text position costs
// one walk as deep as the longest pattern starting with its units, however
// many patterns there are (Gemma's tokenizer has 6,415 added tokens, 6,322 of
// them starting with '<': comparing each pattern at every '<' made encoding
// an HTML-heavy text slow).
template <typename CharT>
class TokenMatcher {
 public:
  struct Match {
    size_t begin;
    size_t end;
    int index;  // into the patterns given to the constructor
  };

  // Empty patterns never match; of equal patterns the first one is reported.
  explicit TokenMatcher(const std::vector<std::basic_string<CharT>>& patterns) {
    first_.fill(false);
    pattern_at_.push_back(-1);  // the root
    for (size_t k = 0; k < patterns.size(); ++k) {
      const std::basic_string<CharT>& p = patterns[k];
      if (p.empty()) continue;
      first_[Bucket(p[0])] = true;
      int32_t node = 0;
      for (const CharT c : p) {
        const auto [it, added] =
            children_.try_emplace(Edge(node, c), static_cast<int32_t>(pattern_at_.size()));
        if (added) pattern_at_.push_back(-1);
        node = it->second;
      }
      if (pattern_at_[node] < 0) pattern_at_[node] = static_cast<int>(k);
    }
  }

  bool empty() const { return pattern_at_.size() == 1; }

  // The first match starting at or after `pos`; false if there is none.
  bool FindNext(std::basic_string_view<CharT> text, size_t pos, Match* match) const {
    for (size_t i = pos; i < text.size(); ++i) {
      if (!first_[Bucket(text[i])]) continue;
      int best = -1;
      size_t best_end = i;
      int32_t node = 0;
      for (size_t j = i; j < text.size(); ++j) {
        const auto it = children_.find(Edge(node, text[j]));
        if (it == children_.end()) break;
        node = it->second;
        if (pattern_at_[node] >= 0) {
          best = pattern_at_[node];
          best_end = j + 1;
        }
      }
      if (best >= 0) {
        *match = {i, best_end, best};
        return true;
      }
    }
    return false;
  }

 private:
  static uint32_t Unit(CharT c) {
    return static_cast<uint32_t>(static_cast<std::make_unsigned_t<CharT>>(c));
  }
  static size_t Bucket(CharT c) { return Unit(c) & 0xFF; }
  static uint64_t Edge(int32_t node, CharT c) {
    return static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32 | Unit(c);
  }

  absl::flat_hash_map<uint64_t, int32_t> children_;  // (node << 32 | unit) -> child node
  std::vector<int> pattern_at_;                      // per node: the pattern ending there, or -1
  std::array<bool, 256> first_;                      // a cheap filter on the first unit's low byte
};

}  // namespace engine::tokenizer
