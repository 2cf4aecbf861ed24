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
