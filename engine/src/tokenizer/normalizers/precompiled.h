// Hugging Face's Precompiled normalizer: SentencePiece's precompiled_charsmap
// (a darts-clone double-array trie over UTF-8 and a pool of NUL-terminated
// replacement strings), applied per grapheme cluster as the Rust crate does:
// a cluster shorter than 6 bytes whose bytes start with a key is replaced
// whole by that key's replacement (the shortest key), otherwise each code
// point is looked up alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "normalizers/normalizer.h"

namespace engine::tokenizer {

class Precompiled : public Normalizer {
 public:
  // `charsmap` is the decoded blob: u32 trie byte size, the trie, the pool.
  static absl::StatusOr<std::unique_ptr<Precompiled>> Create(std::string_view charsmap);

  void Normalize(std::vector<NormChar>* chars) const override;

  // The replacement for the shortest key that prefixes `chunk`, if any.
  std::optional<std::string_view> Transform(std::string_view chunk) const;

 private:
  Precompiled() = default;

  std::vector<uint32_t> trie_;
  std::string pool_;
};

}  // namespace engine::tokenizer
