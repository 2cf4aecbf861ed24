#include "utf8.h"

#include <cstring>

namespace engine {

size_t FindInvalidUtf8(std::string_view s) {
  using tokenizer::DecodeUtf8;
  size_t i = 0;
  while (i < s.size()) {
    // ASCII runs are the common case: skip them eight bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= s.size()) break;
    char32_t cp = 0;
    const int n = DecodeUtf8(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace engine
