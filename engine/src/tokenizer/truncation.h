// Longest-first truncation of one text or a pair, as Hugging Face's Rust
// crate does it (tokenizers 0.23 and later, including its early exit).
#pragma once

#include <vector>

#include "engine/tokenizer.h"
#include "text_encoder.h"

namespace engine::tokenizer {

// How many tokens of each sequence to keep so that, with `num_special`
// special tokens, at most `max_length` ids remain; the Rust crate's
// TruncationStrategy::LongestFirst. `len_b` < 0 means there is no second text.
// Requires max_length >= num_special.
void TruncateLongestFirst(int max_length, int num_special, int* len_a, int* len_b);

// How many of a text's tokens the crate has when it truncates: since 0.23 it
// stops tokenizing a text once it holds `max_length` tokens, after the
// pre-token (not an added token) that reaches the limit, walking from the
// side it keeps (huggingface/tokenizers#1990). For one text this never
// changes the result; for a pair longest_first compares these counts, so it
// decides which text gets the odd token.
int TokensBeforeEarlyExit(const std::vector<Piece>& pieces, int max_length, TruncationSide side);

}  // namespace engine::tokenizer
