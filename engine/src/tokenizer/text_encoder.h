// One text to token ids with byte offsets: added tokens cut out of the input,
// the rest normalized, pre-tokenized into words and given to the model. No
// special tokens (the post-processor adds them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "added_tokens.h"
#include "models/model.h"
#include "normalizers/normalizer.h"
#include "pre_tokenizers/pre_tokenizer.h"
#include "token_matcher.h"

namespace engine::tokenizer {

struct Piece {
  int32_t id;
  int32_t begin;  // [begin, end): bytes of the text it came from
  int32_t end;
  int32_t split = 0;   // the pre-token or added token it belongs to, in text order
  bool added = false;  // an added token (not the model's)
};

// Buffers reused across calls (one set per thread) so that encoding a text
// allocates little once they have grown.
struct EncodeScratch {
  std::vector<NormChar> chars;
  std::vector<NormChar> word_chars;
  std::vector<Span> words;
  std::u32string codepoints;
  std::string word;
  std::vector<int32_t> char_starts;
  std::vector<SubWord> subwords;

  // One huge request should not pin its memory to the thread forever.
  void Trim();
};

class TextEncoder {
 public:
  // The parts are borrowed and must outlive the encoder; normalizer and
  // pre_tokenizer may be null.
  TextEncoder(const Normalizer* normalizer, const PreTokenizer* pre_tokenizer, const Model* model,
              const std::vector<AddedToken>& added_tokens);

  // `text` must be valid UTF-8 shorter than 2 GiB. Replaces *out.
  void Encode(std::string_view text, EncodeScratch* scratch, std::vector<Piece>* out) const;

 private:
  void EncodeSegment(std::string_view segment, int32_t base, EncodeScratch* s,
                     std::vector<Piece>* out) const;
  // Pre-tokenizes normalized characters [from, to) of s->chars and runs the model.
  void EncodeWords(size_t from, size_t to, EncodeScratch* s, std::vector<Piece>* out) const;

  const Normalizer* normalizer_;
  const PreTokenizer* pre_tokenizer_;
  const Model* model_;
  std::vector<AddedToken> raw_tokens_;         // matched in the input
  std::vector<AddedToken> normalized_tokens_;  // matched in the normalized text
  TokenMatcher<char> raw_matcher_;
  TokenMatcher<char32_t> normalized_matcher_;
};

}  // namespace engine::tokenizer
