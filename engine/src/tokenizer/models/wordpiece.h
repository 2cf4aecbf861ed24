// Greedy longest-match-first WordPiece over one pre-tokenized word.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "models/model.h"

namespace engine::tokenizer {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  int max_input_chars_per_word = 100;
};

class WordPiece : public Model {
 public:
  // `vocab` holds every token with its id (later duplicates win); unk_id() is
  // -1 if the unknown token is not among them, which the caller must check.
  WordPiece(const std::vector<std::pair<std::string, int32_t>>& vocab,
            const WordPieceOptions& options);

  // `word` holds the UTF-8 of `num_chars` characters; char_starts[k] is the
  // byte offset of character k and char_starts[num_chars] == word.size().
  // Appends the pieces of the word, or a single unknown token for all of it.
  void Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                std::vector<SubWord>* out) const override;

  // The id of `token` in the vocabulary, or -1.
  int32_t TokenToId(std::string_view token) const override;
  std::vector<std::pair<std::string, int32_t>> Vocab() const override { return vocab_; }
  int32_t unk_id() const override { return unk_id_; }

 private:
  using Map = absl::flat_hash_map<std::string, int32_t>;
  static int32_t Lookup(const Map& map, std::string_view key);

  std::vector<std::pair<std::string, int32_t>> vocab_;
  Map words_;          // every token, looked up for a word's first piece
  Map continuations_;  // tokens that start with the prefix, keyed without it
  size_t max_word_bytes_ = 0;
  size_t max_continuation_bytes_ = 0;
  int32_t unk_id_ = -1;
  int max_chars_;
};

}  // namespace engine::tokenizer
