#include "server/utf8.h"

#include <cstdint>

namespace server {

bool IsValidUtf8(std::string_view text, size_t* error_offset) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const uint8_t lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    int continuation = 0;
    // The range the second byte must fall in excludes overlong forms,
    // surrogates (U+D800..U+DFFF) and code points past U+10FFFF.
    uint8_t second_min = 0x80, second_max = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      continuation = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      continuation = 2;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      continuation = 3;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
    } else {
      *error_offset = i;
      return false;
    }
    for (int k = 1; k <= continuation; ++k) {
      if (i + k >= size) {
        *error_offset = i;
        return false;
      }
      const uint8_t byte = bytes[i + k];
      const uint8_t low = k == 1 ? second_min : 0x80;
      const uint8_t high = k == 1 ? second_max : 0xBF;
      if (byte < low || byte > high) {
        *error_offset = i;
        return false;
      }
    }
    i += continuation + 1;
  }
  return true;
}

}  // namespace server
