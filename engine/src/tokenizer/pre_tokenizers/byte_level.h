// Hugging Face's ByteLevel pre-tokenizer (GPT-2, RoBERTa): optionally a space
// before the text, words cut by GPT-2's pattern, then every UTF-8 byte of a
// word written as one printable character (bytes_to_unicode), so that BPE
// sees no unknown characters.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"

namespace engine::tokenizer {

// GPT-2's byte -> character table and its inverse (-1: not a byte character).
const std::array<char32_t, 256>& BytesToChars();
int ByteOfChar(char32_t c);

// The words of GPT-2's split pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// over chars[begin, end), by a scanner written for this one pattern (\s is
// Unicode White_Space, as Oniguruma's). Its matches tile the text.
void SplitGpt2(const std::vector<NormChar>& chars, uint32_t begin, uint32_t end,
               std::vector<Span>* out);

class ByteLevel : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {}

  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;

 private:
  bool add_prefix_space_;
  bool use_regex_;
};

}  // namespace engine::tokenizer
