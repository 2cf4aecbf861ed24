// A model turns one pre-tokenized word into vocabulary ids (Hugging Face's
// `models`: WordPiece, Unigram, BPE).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace engine::tokenizer {

// A std::string_view as Abseil's own string_view (Debian's Abseil keeps its
// own type), for looking up absl::flat_hash_map keys without a copy.
inline absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// One piece of a word: its id and the word's characters [begin, end) it covers.
struct SubWord {
  int32_t id;
  int32_t begin;
  int32_t end;
};

class Model {
 public:
  virtual ~Model() = default;

  // Thread-safe. `word` holds the UTF-8 of `num_chars` characters;
  // char_starts[k] is the byte offset of character k and
  // char_starts[num_chars] == word.size(). Appends the pieces of the word.
  virtual void Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                        std::vector<SubWord>* out) const = 0;

  // The id of `token` in the vocabulary, or -1.
  virtual int32_t TokenToId(std::string_view token) const = 0;
  // Every token with its id.
  virtual std::vector<std::pair<std::string, int32_t>> Vocab() const = 0;
  // The unknown token's id, or -1 if the model has none.
  virtual int32_t unk_id() const = 0;
};

}  // namespace engine::tokenizer
