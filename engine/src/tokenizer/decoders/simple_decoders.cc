#include "decoders/simple_decoders.h"

#include <cstdio>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "decoders/byte_level_decoder.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

// The byte of a "<0xXX>" token, or -1.
int ByteToken(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  unsigned v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = t[k];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= c - '0';
    } else if (c >= 'A' && c <= 'F') {
      v |= c - 'A' + 10;
    } else {
      return -1;
    }
  }
  return static_cast<int>(v);
}

}  // namespace

void ByteFallbackDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  std::vector<std::string> out;
  std::string bytes;
  int pending = 0;  // byte tokens in `bytes`
  const auto flush = [&] {
    if (pending == 0) return;
    if (FindInvalidUtf8(bytes) == std::string::npos) {
      out.push_back(bytes);
    } else {
      // One U+FFFD per byte token, as the Rust crate.
      for (int k = 0; k < pending; ++k) out.emplace_back("\xEF\xBF\xBD");
    }
    bytes.clear();
    pending = 0;
  };
  for (std::string& t : *tokens) {
    if (const int b = ByteToken(t); b >= 0) {
      bytes.push_back(static_cast<char>(b));
      ++pending;
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  tokens->swap(out);
}

void FuseDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  tokens->assign(1, absl::StrJoin(*tokens, ""));
}

void StripDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  if (content_.empty()) return;
  for (std::string& t : *tokens) {
    size_t b = 0;
    for (int k = 0; k < start_ && t.compare(b, content_.size(), content_) == 0; ++k) {
      b += content_.size();
    }
    size_t e = t.size();
    for (int k = 0; k < stop_ && e >= b + content_.size() &&
                    t.compare(e - content_.size(), content_.size(), content_) == 0;
         ++k) {
      e -= content_.size();
    }
    t = t.substr(b, e - b);
  }
}

void ReplaceDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  if (pattern_.empty()) return;
  for (std::string& t : *tokens) t = absl::StrReplaceAll(t, {{pattern_, content_}});
}

}  // namespace engine::tokenizer
