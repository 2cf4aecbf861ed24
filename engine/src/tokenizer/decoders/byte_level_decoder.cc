#include "decoders/byte_level_decoder.h"

#include "pre_tokenizers/byte_level.h"
#include "utf8.h"

namespace engine::tokenizer {

std::string Utf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    char32_t cp = 0;
    if (const int n = DecodeUtf8(bytes, i, &cp); n > 0) {
      out.append(bytes, i, n);
      i += n;
      continue;
    }
    // The maximal subpart: the lead byte and the continuation bytes that are
    // still a valid prefix of some sequence.
    const auto b0 = static_cast<uint8_t>(bytes[i]);
    size_t len = 1;
    int need = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    }
    for (int k = 0; k < need && i + len < bytes.size(); ++k) {
      const auto b = static_cast<uint8_t>(bytes[i + len]);
      if (b < (k == 0 ? lo : 0x80) || b > (k == 0 ? hi : 0xBF)) break;
      ++len;
    }
    out += "\xEF\xBF\xBD";
    i += len;
  }
  return out;
}

void ByteLevelDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  std::string bytes;
  for (const std::string& t : *tokens) {
    const size_t mark = bytes.size();
    bool all = true;
    for (size_t k = 0; k < t.size() && all;) {
      char32_t cp = 0;
      const int n = DecodeUtf8(t, k, &cp);
      const int b = n > 0 ? ByteOfChar(cp) : -1;
      if (b < 0) {
        all = false;
        break;
      }
      bytes.push_back(static_cast<char>(b));
      k += n;
    }
    if (!all) {
      bytes.resize(mark);
      bytes += t;
    }
  }
  tokens->assign(1, Utf8Lossy(bytes));
}

}  // namespace engine::tokenizer
