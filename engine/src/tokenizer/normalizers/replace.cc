#include "normalizers/replace.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/tokenizer.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

absl::StatusOr<std::u32string> Decode(const std::string& s, const char* what) {
  if (const size_t bad = FindInvalidUtf8(s); bad != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("Replace: ", what, " is not UTF-8"));
  }
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    i += DecodeUtf8(s, i, &cp);
    out.push_back(cp);
  }
  return out;
}

}  // namespace

Replace::~Replace() = default;

absl::StatusOr<std::unique_ptr<Replace>> Replace::Literal(const std::string& pattern,
                                                          const std::string& content) {
  std::unique_ptr<Replace> r(new Replace());
  auto literal = Decode(pattern, "pattern");
  auto replacement = Decode(content, "content");
  if (!literal.ok()) return literal.status();
  if (!replacement.ok()) return replacement.status();
  if (literal->empty()) return absl::InvalidArgumentError("Replace: the pattern is empty");
  r->literal_ = *std::move(literal);
  r->content_ = *std::move(replacement);
  return r;
}

absl::StatusOr<std::unique_ptr<Replace>> Replace::Regex(const std::string& pattern,
                                                        const std::string& content) {
  std::unique_ptr<Replace> r(new Replace());
  auto replacement = Decode(content, "content");
  if (!replacement.ok()) return replacement.status();
  r->content_ = *std::move(replacement);
  UParseError parse_error;
  UErrorCode status = U_ZERO_ERROR;
  r->regex_.reset(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(pattern), 0, parse_error, status));
  if (U_FAILURE(status) || r->regex_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Replace: the regex \"", pattern,
                                                   "\" does not compile: ", u_errorName(status)));
  }
  return r;
}

void Replace::FindMatches(const std::vector<NormChar>& chars,
                          std::vector<std::pair<size_t, size_t>>* matches) const {
  matches->clear();
  if (!literal_.empty()) {
    const size_t n = literal_.size();
    for (size_t i = 0; i + n <= chars.size();) {
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
  thread_local std::vector<int32_t> char_of_unit;
  text.remove();
  char_of_unit.clear();
  for (size_t i = 0; i < chars.size(); ++i) {
    text.append(static_cast<UChar32>(chars[i].cp));
    char_of_unit.resize(text.length(), static_cast<int32_t>(i));
  }
  char_of_unit.push_back(static_cast<int32_t>(chars.size()));
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> m(regex_->matcher(text, status));
  if (U_FAILURE(status)) return;
  while (m->find(status) && U_SUCCESS(status)) {
    const int32_t b = m->start(status);
    const int32_t e = m->end(status);
    if (U_FAILURE(status) || b == e) continue;  // empty matches replace nothing
    matches->emplace_back(char_of_unit[b], char_of_unit[e]);
  }
}

void Replace::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<std::pair<size_t, size_t>> matches;
  thread_local std::vector<NormChar> out;
  FindMatches(*chars, &matches);
  if (matches.empty()) return;
  out.clear();
  size_t pos = 0;
  for (const auto& [b, e] : matches) {
    out.insert(out.end(), chars->begin() + pos, chars->begin() + b);
    int32_t begin = (*chars)[b].begin;
    int32_t end = (*chars)[b].end;
    for (size_t k = b + 1; k < e; ++k) {
      begin = std::min(begin, (*chars)[k].begin);
      end = std::max(end, (*chars)[k].end);
    }
    for (const char32_t c : content_) out.push_back({c, begin, end, 0});
    pos = e;
  }
  out.insert(out.end(), chars->begin() + pos, chars->end());
  chars->swap(out);
}

}  // namespace engine::tokenizer
