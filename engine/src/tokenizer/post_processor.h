// Special tokens around the sequences ([CLS] A [SEP] / [CLS] A [SEP] B [SEP],
// Hugging Face's TemplateProcessing) and LongestFirst truncation.
#pragma once

#include <cstdint>
#include <vector>

namespace engine::tokenizer {

struct TemplatePiece {
  int sequence = -1;         // -1: special tokens; 0: the first text; 1: the second
  int type_id = 0;           // token type of everything this piece emits
  std::vector<int32_t> ids;  // for special tokens
};

struct Template {
  std::vector<TemplatePiece> pieces;
  int NumSpecialTokens() const;
};

// How many tokens of each sequence to keep so that, with `num_special`
// special tokens, at most `max_length` ids remain; the Rust crate's
// TruncationStrategy::LongestFirst. `len_b` < 0 means there is no second text.
// Requires max_length >= num_special.
void TruncateLongestFirst(int max_length, int num_special, int* len_a, int* len_b);

}  // namespace engine::tokenizer
