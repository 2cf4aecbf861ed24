// Hugging Face's Split pre-tokenizer: words cut at the matches of a string or
// regex (pattern.h) with a split behavior; `invert` makes the matches the
// words and the text between them the delimiters.
#pragma once

#include <vector>

#include "pattern.h"
#include "pre_tokenizers/pre_tokenizer.h"
#include "pre_tokenizers/split_behavior.h"

namespace engine::tokenizer {

class Split : public PreTokenizer {
 public:
  Split(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

}  // namespace engine::tokenizer
