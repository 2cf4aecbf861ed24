// Hugging Face's BPE model: a word starts as one symbol per character (with
// continuing_subword_prefix / end_of_word_suffix), then the adjacent pair with
// the lowest merge rank is merged until no merge applies. Unknown characters
// become unk (fused if fuse_unk), <0xXX> bytes with byte_fallback, or vanish
// without an unk token; ignore_merges takes a whole word found in the vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "models/model.h"

namespace engine::tokenizer {

struct BpeOptions {
  std::string unk_token;  // empty: none
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

class Bpe : public Model {
 public:
  // `merges` in rank order; each part and their concatenation must be in `vocab`.
  static absl::StatusOr<std::unique_ptr<Bpe>> Create(
      std::vector<std::pair<std::string, int32_t>> vocab,
      const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options);

  void Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                std::vector<SubWord>* out) const override;
  int32_t TokenToId(std::string_view token) const override;
  std::vector<std::pair<std::string, int32_t>> Vocab() const override { return vocab_; }
  int32_t unk_id() const override { return unk_id_; }

 private:
  Bpe() = default;
  struct Merge {
    int32_t rank;
    int32_t new_id;
  };
  const Merge* FindMerge(int32_t left, int32_t right) const;

  std::vector<std::pair<std::string, int32_t>> vocab_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  absl::flat_hash_map<uint64_t, Merge> merges_;  // (left id << 32 | right id)
  std::vector<int32_t> byte_ids_;                // <0xXX> with byte_fallback
  BpeOptions options_;
  int32_t unk_id_ = -1;
};

}  // namespace engine::tokenizer
