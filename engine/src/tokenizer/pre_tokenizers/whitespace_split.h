// Hugging Face's WhitespaceSplit: words end at whitespace (Unicode White_Space,
// Rust's char::is_whitespace), which is dropped.
#pragma once

#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"

namespace engine::tokenizer {

class WhitespaceSplit : public PreTokenizer {
 public:
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;
};

}  // namespace engine::tokenizer
