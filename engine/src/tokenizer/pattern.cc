#include "pattern.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/tokenizer.h"
#include "utf8.h"

namespace engine::tokenizer {

absl::StatusOr<std::u32string> DecodeCodePoints(const std::string& s, const char* what) {
  if (FindInvalidUtf8(s) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not UTF-8"));
  }
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    i += DecodeUtf8(s, i, &cp);
    out.push_back(cp);
  }
  return out;
}

Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;
Pattern::~Pattern() = default;

absl::StatusOr<Pattern> Pattern::Literal(const std::string& text) {
  auto literal = DecodeCodePoints(text, "the pattern");
  if (!literal.ok()) return literal.status();
  if (literal->empty()) return absl::InvalidArgumentError("the pattern is empty");
  Pattern p;
  p.literal_ = *std::move(literal);
  return p;
}

absl::StatusOr<Pattern> Pattern::Regex(const std::string& regex) {
  UParseError parse_error;
  UErrorCode status = U_ZERO_ERROR;
  Pattern p;
  p.regex_.reset(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(regex), 0, parse_error, status));
  if (U_FAILURE(status) || p.regex_ == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the regex \"", regex, "\" does not compile: ", u_errorName(status)));
  }
  return p;
}

void Pattern::FindMatches(const std::vector<NormChar>& chars, size_t begin, size_t end,
                          std::vector<std::pair<size_t, size_t>>* matches) const {
  matches->clear();
  if (regex_ == nullptr) {
    const size_t n = literal_.size();
    for (size_t i = begin; i + n <= end;) {
      size_t k = 0;
      while (k < n && chars[i + k].cp == literal_[k]) ++k;
      if (k == n) {
        matches->emplace_back(i, i + n);
        i += n;
      } else {
        ++i;
      }
    }
    return;
  }
  // ICU matches UTF-16; map unit indices back to characters.
  thread_local icu::UnicodeString text;
  thread_local std::vector<size_t> char_of_unit;
  text.remove();
  char_of_unit.clear();
  for (size_t i = begin; i < end; ++i) {
    text.append(static_cast<UChar32>(chars[i].cp));
    char_of_unit.resize(text.length(), i);
  }
  char_of_unit.push_back(end);
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> m(regex_->matcher(text, status));
  if (U_FAILURE(status)) return;
  while (m->find(status) && U_SUCCESS(status)) {
    const int32_t b = m->start(status);
    const int32_t e = m->end(status);
    if (U_FAILURE(status) || b == e) continue;  // empty matches delimit nothing
    matches->emplace_back(char_of_unit[b], char_of_unit[e]);
  }
}

}  // namespace engine::tokenizer
