// A literal string or a regular expression (ICU's engine; the Rust crate uses
// Oniguruma, whose syntax agrees for the patterns tokenizer files use), found
// in code points: what Replace and Split match.
#pragma once

#include <unicode/uversion.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "normalized_text.h"

U_NAMESPACE_BEGIN
class RegexPattern;
U_NAMESPACE_END

namespace engine::tokenizer {

// UTF-8 to code points; an error if not UTF-8.
absl::StatusOr<std::u32string> DecodeCodePoints(const std::string& s, const char* what);

class Pattern {
 public:
  static absl::StatusOr<Pattern> Literal(const std::string& text);
  static absl::StatusOr<Pattern> Regex(const std::string& regex);
  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;
  ~Pattern();

  // Non-overlapping, non-empty matches in chars[begin, end) as character
  // ranges, left to right (replaces *matches).
  void FindMatches(const std::vector<NormChar>& chars, size_t begin, size_t end,
                   std::vector<std::pair<size_t, size_t>>* matches) const;

 private:
  Pattern() = default;
  std::u32string literal_;
  std::unique_ptr<icu::RegexPattern> regex_;
};

}  // namespace engine::tokenizer
