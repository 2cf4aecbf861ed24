#include "pre_tokenizers/byte_level.h"

#include <string>

#include "unicode.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

enum class Gpt2Class : uint8_t { kSpace, kLetter, kNumber, kOther };

Gpt2Class ClassOf(char32_t c) {
  if (c < 0x80) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) return Gpt2Class::kSpace;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Gpt2Class::kLetter;
    if (c >= '0' && c <= '9') return Gpt2Class::kNumber;
    return Gpt2Class::kOther;
  }
  if (IsWhitespace(c)) return Gpt2Class::kSpace;
  if (IsLetter(c)) return Gpt2Class::kLetter;
  if (IsNumber(c)) return Gpt2Class::kNumber;
  return Gpt2Class::kOther;
}

// Length of a contraction ('s 't 're 've 'm 'll 'd) at chars[i], or 0.
uint32_t Contraction(const std::vector<NormChar>& chars, uint32_t i, uint32_t end) {
  if (chars[i].cp != U'\'' || i + 1 >= end) return 0;
  const char32_t a = chars[i + 1].cp;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= end) return 0;
  const char32_t b = chars[i + 2].cp;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

const std::array<char32_t, 256>& BytesToChars() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

int ByteOfChar(char32_t c) {
  static const std::array<int16_t, 512> inverse = [] {
    std::array<int16_t, 512> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[BytesToChars()[b]] = static_cast<int16_t>(b);
    return t;
  }();
  return c < 512 ? inverse[c] : -1;
}

void SplitGpt2(const std::vector<NormChar>& chars, uint32_t begin, uint32_t end,
               std::vector<Span>* out) {
  const auto run = [&](uint32_t from, Gpt2Class cls) {
    while (from < end && ClassOf(chars[from].cp) == cls) ++from;
    return from;
  };
  for (uint32_t i = begin; i < end;) {
    if (const uint32_t n = Contraction(chars, i, end); n > 0) {
      out->push_back({i, i + n});
      i += n;
      continue;
    }
    const Gpt2Class cls = ClassOf(chars[i].cp);
    if (cls != Gpt2Class::kSpace) {  // \p{L}+, \p{N}+ or [^\s\p{L}\p{N}]+
      const uint32_t j = run(i + 1, cls);
      out->push_back({i, j});
      i = j;
      continue;
    }
    // " " before a letter, digit or other character joins it ( ?\p{L}+ ...).
    if (chars[i].cp == U' ' && i + 1 < end) {
      const Gpt2Class next = ClassOf(chars[i + 1].cp);
      if (next != Gpt2Class::kSpace) {
        const uint32_t j = run(i + 2, next);
        out->push_back({i, j});
        i = j;
        continue;
      }
    }
    // \s+(?!\S) leaves the last space before a non-space to the next word;
    // a single space there is \s+ alone.
    const uint32_t j = run(i + 1, Gpt2Class::kSpace);
    const uint32_t stop = (j < end && j - i >= 2) ? j - 1 : j;
    out->push_back({i, stop});
    i = stop;
  }
}

void ByteLevel::PreTokenize(std::vector<NormChar>* chars, std::vector<Span>* words) const {
  thread_local std::vector<NormChar> spaced;
  thread_local std::vector<Span> split;
  thread_local std::vector<NormChar> out_chars;
  thread_local std::vector<Span> out_words;
  const std::vector<NormChar>* source = chars;
  split.clear();
  if (add_prefix_space_) {
    // Each word not starting with a space gets one, standing for its first character.
    spaced.clear();
    for (const Span w : *words) {
      if (w.begin == w.end) continue;
      const auto b = static_cast<uint32_t>(spaced.size());
      const NormChar& first = (*chars)[w.begin];
      if (first.cp != U' ') spaced.push_back({U' ', first.begin, first.end, 0});
      spaced.insert(spaced.end(), chars->begin() + w.begin, chars->begin() + w.end);
      split.push_back({b, static_cast<uint32_t>(spaced.size())});
    }
    source = &spaced;
  } else {
    split.assign(words->begin(), words->end());
  }
  out_words.clear();
  if (use_regex_) {
    for (const Span w : split) SplitGpt2(*source, w.begin, w.end, &out_words);
  } else {
    out_words = split;
  }
  // Every UTF-8 byte becomes a character with the offsets of its source character.
  out_chars.clear();
  std::string utf8;
  for (Span& w : out_words) {
    const auto b = static_cast<uint32_t>(out_chars.size());
    for (uint32_t i = w.begin; i < w.end; ++i) {
      const NormChar& c = (*source)[i];
      utf8.clear();
      AppendUtf8(c.cp, &utf8);
      for (const char byte : utf8) {
        out_chars.push_back({BytesToChars()[static_cast<uint8_t>(byte)], c.begin, c.end, 0});
      }
    }
    w = {b, static_cast<uint32_t>(out_chars.size())};
  }
  chars->swap(out_chars);
  words->swap(out_words);
}

}  // namespace engine::tokenizer
