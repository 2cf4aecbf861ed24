// Hugging Face's pre-tokenizers that cut by character class:
//   Whitespace   runs of \w (letters, marks, decimal digits, connector
//                punctuation) and runs of other non-space characters
//                (the pattern \w+|[^\w\s]+);
//   Punctuation  ASCII or Unicode P* punctuation, with a split behavior;
//   Digits       Unicode numbers (N*), each alone or in runs.
#pragma once

#include <vector>

#include "pre_tokenizers/pre_tokenizer.h"
#include "pre_tokenizers/split_behavior.h"

namespace engine::tokenizer {

class WhitespacePreTokenizer : public PreTokenizer {
 public:
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;
};

class Punctuation : public PreTokenizer {
 public:
  explicit Punctuation(SplitBehavior behavior) : behavior_(behavior) {}
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;

 private:
  SplitBehavior behavior_;
};

class Digits : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const override;

 private:
  bool individual_;
};

}  // namespace engine::tokenizer
