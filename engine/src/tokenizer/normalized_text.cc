#include "normalized_text.h"

#include "utf8.h"

namespace engine::tokenizer {

void AppendChars(std::string_view text, int32_t base, std::vector<NormChar>* out) {
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    int n = DecodeUtf8(text, i, &cp);
    if (n == 0) n = 1;  // callers validate; never loop on a stray byte
    const auto begin = static_cast<int32_t>(base + i);
    out->push_back({cp, begin, static_cast<int32_t>(begin + n), 0});
    i += n;
  }
}

void ApplyChanges(const std::vector<NormChar>& in, size_t skipped,
                  const std::vector<CharChange>& changes, std::vector<NormChar>* out) {
  out->clear();
  // The crate aligns a character inserted before any input one to (0, 0), the
  // start of its text; ours carry absolute offsets, so: the first one's start.
  const NormChar none{0, in.empty() ? 0 : in.front().begin, in.empty() ? 0 : in.front().begin, 0};
  size_t next = skipped;  // the next input character to replace
  for (const CharChange& c : changes) {
    const NormChar* source = &none;
    if (c.change > 0) {
      if (next > 0 && next <= in.size()) source = &in[next - 1];
    } else {
      if (next < in.size()) source = &in[next];
      next += 1 + static_cast<size_t>(-c.change);
    }
    out->push_back({c.cp, source->begin, source->end, 0});
  }
}

void CharsToUtf8(const std::vector<NormChar>& chars, size_t begin, size_t end, std::string* utf8,
                 std::vector<int32_t>* starts) {
  utf8->clear();
  starts->clear();
  for (size_t i = begin; i < end; ++i) {
    starts->push_back(static_cast<int32_t>(utf8->size()));
    AppendUtf8(chars[i].cp, utf8);
  }
  starts->push_back(static_cast<int32_t>(utf8->size()));
}

}  // namespace engine::tokenizer
