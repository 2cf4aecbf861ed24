// Added (special) tokens such as [CLS] or [MASK] are cut out of the text before
// normalization, leftmost-longest, as Hugging Face's AddedVocabulary does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool normalized = false;   // matched in the normalized text instead of the input
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only where no word character touches it
};

// Leftmost-longest search for a set of strings over code units of CharT
// (bytes of the input, or code points of the normalized text).
template <typename CharT>
class TokenMatcher {
 public:
  struct Match {
    size_t begin;
    size_t end;
    int index;  // into the patterns given to the constructor
  };

  explicit TokenMatcher(std::vector<std::basic_string<CharT>> patterns)
      : patterns_(std::move(patterns)) {
    first_.fill(false);
    for (const auto& p : patterns_) {
      if (!p.empty()) first_[Bucket(p[0])] = true;
    }
  }

  bool empty() const { return patterns_.empty(); }

  // The first match starting at or after `pos`; false if there is none.
  bool FindNext(std::basic_string_view<CharT> text, size_t pos, Match* match) const {
    for (size_t i = pos; i < text.size(); ++i) {
      if (!first_[Bucket(text[i])]) continue;
      int best = -1;
      for (size_t k = 0; k < patterns_.size(); ++k) {
        const auto& p = patterns_[k];
        if (p.empty() || (best >= 0 && p.size() <= patterns_[best].size())) continue;
        if (text.compare(i, p.size(), p) == 0) best = static_cast<int>(k);
      }
      if (best >= 0) {
        *match = {i, i + patterns_[best].size(), best};
        return true;
      }
    }
    return false;
  }

 private:
  static size_t Bucket(CharT c) { return static_cast<size_t>(c) & 0xFF; }

  std::vector<std::basic_string<CharT>> patterns_;
  std::array<bool, 256> first_;  // a cheap filter on the first unit's low byte
};

}  // namespace engine::tokenizer
