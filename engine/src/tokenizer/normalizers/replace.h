// Hugging Face's Replace normalizer: every match of a literal string or a
// regular expression (pattern.h) becomes `content`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "normalizers/normalizer.h"
#include "pattern.h"

namespace engine::tokenizer {

class Replace : public Normalizer {
 public:
  static absl::StatusOr<std::unique_ptr<Replace>> Create(Pattern pattern,
                                                         const std::string& content);
  void Normalize(std::vector<NormChar>* chars) const override;

 private:
  Replace(Pattern pattern, std::u32string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  Pattern pattern_;
  std::u32string content_;
};

}  // namespace engine::tokenizer
