#include "models/word_level.h"

namespace engine::tokenizer {

WordLevel::WordLevel(std::vector<std::pair<std::string, int32_t>> vocab,
                     const std::string& unk_token)
    : vocab_(std::move(vocab)) {
  for (const auto& [token, id] : vocab_) ids_[token] = id;
  unk_id_ = TokenToId(unk_token);
}

void WordLevel::Tokenize(std::string_view word, const int32_t* /*char_starts*/, int num_chars,
                         std::vector<SubWord>* out) const {
  if (num_chars == 0) return;
  const int32_t id = TokenToId(word);
  out->push_back({id >= 0 ? id : unk_id_, 0, num_chars});
}

int32_t WordLevel::TokenToId(std::string_view token) const {
  // absl::string_view is not std::string_view in Debian's Abseil build.
  const auto it = ids_.find(absl::string_view(token.data(), token.size()));
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace engine::tokenizer
