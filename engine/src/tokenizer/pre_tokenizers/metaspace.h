// Hugging Face's Metaspace (SentencePiece style): spaces become the
// replacement character ("▁"), which is prepended to words as the scheme says,
// and (with split) every replacement character starts a new word.
#pragma once

#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"

namespace engine::tokenizer {

enum class PrependScheme { kAlways, kFirst, kNever };

class Metaspace : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {}

  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;

 private:
  char32_t replacement_;
  PrependScheme scheme_;
  bool split_;
};

}  // namespace engine::tokenizer
