// Hugging Face's WordLevel model: each pre-tokenized word is one token, its
// vocabulary id or the unknown token's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "models/model.h"

namespace engine::tokenizer {

class WordLevel : public Model {
 public:
  // `vocab` holds every token with its id (later duplicates win); unk_id() is
  // -1 if `unk_token` is not among them, which the caller must check.
  WordLevel(std::vector<std::pair<std::string, int32_t>> vocab, const std::string& unk_token);

  void Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                std::vector<SubWord>* out) const override;
  int32_t TokenToId(std::string_view token) const override;
  std::vector<std::pair<std::string, int32_t>> Vocab() const override { return vocab_; }
  int32_t unk_id() const override { return unk_id_; }

 private:
  std::vector<std::pair<std::string, int32_t>> vocab_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  int32_t unk_id_ = -1;
};

}  // namespace engine::tokenizer
