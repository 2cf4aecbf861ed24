// Strict UTF-8 decoding and encoding (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), so that malformed input is rejected, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/tokenizer.h"

namespace engine::tokenizer {

// Decodes the code point starting at s[i]. Returns its length in bytes (1-4)
// and stores it in *cp, or returns 0 (and U+FFFD) if the bytes there are not
// well-formed.
inline int DecodeUtf8(std::string_view s, size_t i, char32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  *cp = 0xFFFD;
  const size_t left = s.size() - i;
  const auto cont = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (left < 2 || !cont(i + 1)) return 0;
    *cp = (char32_t{b0} & 0x1F) << 6 | (byte(i + 1) & 0x3F);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (left < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    const uint8_t b1 = byte(i + 1);
    if ((b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 > 0x9F)) return 0;  // overlong, surrogate
    *cp = (char32_t{b0} & 0x0F) << 12 | (char32_t{b1} & 0x3F) << 6 | (byte(i + 2) & 0x3F);
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    const uint8_t b1 = byte(i + 1);
    if ((b0 == 0xF0 && b1 < 0x90) || (b0 == 0xF4 && b1 > 0x8F)) return 0;  // overlong, > U+10FFFF
    *cp = (char32_t{b0} & 0x07) << 18 | (char32_t{b1} & 0x3F) << 12 |
          (char32_t{byte(i + 2)} & 0x3F) << 6 | (byte(i + 3) & 0x3F);
    return 4;
  }
  return 0;
}

// FindInvalidUtf8 is public: engine/tokenizer.h.
using engine::FindInvalidUtf8;

inline void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace engine::tokenizer
