// Hugging Face's Replace normalizer: every match of a literal string or a
// regular expression (ICU's engine; the Rust crate uses Oniguruma, whose
// syntax agrees for the patterns tokenizer files use) becomes `content`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <unicode/uversion.h>

#include "absl/status/statusor.h"
#include "normalizers/normalizer.h"

U_NAMESPACE_BEGIN
class RegexPattern;
U_NAMESPACE_END

namespace engine::tokenizer {

class Replace : public Normalizer {
 public:
  static absl::StatusOr<std::unique_ptr<Replace>> Literal(const std::string& pattern,
                                                          const std::string& content);
  static absl::StatusOr<std::unique_ptr<Replace>> Regex(const std::string& pattern,
                                                        const std::string& content);
  ~Replace() override;

  void Normalize(std::vector<NormChar>* chars) const override;

 private:
  Replace() = default;
  // Non-overlapping matches as character ranges, left to right.
  void FindMatches(const std::vector<NormChar>& chars,
                   std::vector<std::pair<size_t, size_t>>* matches) const;

  std::u32string literal_;
  std::unique_ptr<icu::RegexPattern> regex_;
  std::u32string content_;
};

}  // namespace engine::tokenizer
