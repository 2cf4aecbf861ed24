#include "normalizers/replace.h"

namespace engine::tokenizer {

absl::StatusOr<std::unique_ptr<Replace>> Replace::Create(Pattern pattern,
                                                         const std::string& content) {
  auto replacement = DecodeCodePoints(content, "content");
  if (!replacement.ok()) return replacement.status();
  return std::unique_ptr<Replace>(new Replace(std::move(pattern), *std::move(replacement)));
}

void Replace::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::vector<std::pair<size_t, size_t>> matches;
  thread_local std::vector<NormChar> out;
  if (chars->empty()) return;
  pattern_.FindMatches(*chars, 0, chars->size(), &matches);
  if (matches.empty()) return;
  out.clear();
  size_t pos = 0;
  for (const auto& [b, e] : matches) {
    out.insert(out.end(), chars->begin() + pos, chars->begin() + b);
    // As the crate: the replacement is inserted after the match is dropped, so
    // it takes the offsets of the match's last character.
    const NormChar& last = (*chars)[e > 0 ? e - 1 : 0];
    for (const char32_t c : content_) out.push_back({c, last.begin, last.end, 0});
    pos = e;
  }
  out.insert(out.end(), chars->begin() + pos, chars->end());
  chars->swap(out);
}

}  // namespace engine::tokenizer
