// Hugging Face's small normalizers: Lowercase (per code point, Rust's
// char::to_lowercase), Strip (whitespace at either end), StripAccents (drops
// combining marks, general category M), Prepend (a string before non-empty text).
#pragma once

#include <string>
#include <vector>

#include "normalizers/normalizer.h"

namespace engine::tokenizer {

class Lowercase : public Normalizer {
 public:
  void Normalize(std::vector<NormChar>* chars) const override;
};

class Strip : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void Normalize(std::vector<NormChar>* chars) const override;

 private:
  bool left_;
  bool right_;
};

class StripAccents : public Normalizer {
 public:
  void Normalize(std::vector<NormChar>* chars) const override;
};

class Prepend : public Normalizer {
 public:
  explicit Prepend(std::u32string prefix) : prefix_(std::move(prefix)) {}
  void Normalize(std::vector<NormChar>* chars) const override;

 private:
  std::u32string prefix_;
};

}  // namespace engine::tokenizer
