#include "normalizers/replace.h"

#include <algorithm>

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
  pattern_.FindMatches(*chars, 0, chars->size(), &matches);
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
