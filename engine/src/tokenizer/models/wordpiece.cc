#include "models/wordpiece.h"

#include <algorithm>

#include "absl/strings/string_view.h"

namespace engine::tokenizer {

WordPiece::WordPiece(const std::vector<std::pair<std::string, int32_t>>& vocab,
                     const WordPieceOptions& options)
    : vocab_(vocab), max_chars_(options.max_input_chars_per_word) {
  const std::string& prefix = options.continuing_subword_prefix;
  words_.reserve(vocab.size());
  for (const auto& [token, id] : vocab) {
    words_[token] = id;
    max_word_bytes_ = std::max(max_word_bytes_, token.size());
    if (token.compare(0, prefix.size(), prefix) == 0 && token.size() > prefix.size()) {
      continuations_[token.substr(prefix.size())] = id;
      max_continuation_bytes_ = std::max(max_continuation_bytes_, token.size() - prefix.size());
    }
  }
  unk_id_ = Lookup(words_, options.unk_token);
}

int32_t WordPiece::Lookup(const Map& map, std::string_view key) {
  // absl::string_view is not std::string_view in Debian's Abseil build.
  const auto it = map.find(absl::string_view(key.data(), key.size()));
  return it == map.end() ? -1 : it->second;
}

int32_t WordPiece::TokenToId(std::string_view token) const { return Lookup(words_, token); }

void WordPiece::Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                         std::vector<SubWord>* out) const {
  if (num_chars > max_chars_) {
    out->push_back({unk_id_, 0, num_chars});
    return;
  }
  const size_t first = out->size();
  int start = 0;
  while (start < num_chars) {
    const Map& map = start == 0 ? words_ : continuations_;
    const size_t max_bytes = start == 0 ? max_word_bytes_ : max_continuation_bytes_;
    // Nothing longer than the longest token can match: start below that.
    int end = num_chars;
    while (end > start && static_cast<size_t>(char_starts[end] - char_starts[start]) > max_bytes) {
      --end;
    }
    int32_t id = -1;
    for (; end > start; --end) {
      id = Lookup(map, word.substr(char_starts[start], char_starts[end] - char_starts[start]));
      if (id >= 0) break;
    }
    if (id < 0) {
      out->resize(first);
      out->push_back({unk_id_, 0, num_chars});
      return;
    }
    out->push_back({id, start, end});
    start = end;
  }
}

}  // namespace engine::tokenizer
