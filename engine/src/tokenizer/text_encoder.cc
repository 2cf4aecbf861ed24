#include "text_encoder.h"

#include <algorithm>
#include <utility>

#include <unicode/uchar.h>

#include "unicode.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

// Byte length of the whitespace that ends / starts `s` (for lstrip / rstrip).
size_t TrailingWhitespace(std::string_view s) {
  size_t last_non_space_end = 0;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const int n = DecodeUtf8(s, i, &cp);
    if (n == 0) break;  // input was validated; never loop on a bad byte
    i += n;
    if (!IsWhitespace(cp)) last_non_space_end = i;
  }
  return s.size() - last_non_space_end;
}

size_t LeadingWhitespace(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp = 0;
    const int n = DecodeUtf8(s, i, &cp);
    if (n == 0 || !IsWhitespace(cp)) break;
    i += n;
  }
  return i;
}

// Whether the code point ending at / starting at byte i of `text` is a word character.
bool WordBefore(std::string_view text, size_t i) {
  if (i == 0) return false;
  size_t k = i - 1;
  while (k > 0 && (static_cast<uint8_t>(text[k]) & 0xC0) == 0x80) --k;
  char32_t cp = 0;
  return DecodeUtf8(text, k, &cp) > 0 && IsWordChar(cp);
}
bool WordAfter(std::string_view text, size_t i) {
  char32_t cp = 0;
  return i < text.size() && DecodeUtf8(text, i, &cp) > 0 && IsWordChar(cp);
}

// As the crate: from the first character's start to the last one's end
// (after NFD reordering or removals these need not be the extremes).
Piece SpanOf(int32_t id, const std::vector<NormChar>& chars, size_t b, size_t e) {
  return Piece{id, chars[b].begin, chars[e - 1].end};
}

int32_t NextSplit(const std::vector<Piece>& pieces) {
  return pieces.empty() ? 0 : pieces.back().split + 1;
}

std::vector<std::string> RawPatterns(const std::vector<AddedToken>& tokens) {
  std::vector<std::string> patterns;
  for (const AddedToken& t : tokens) patterns.push_back(t.content);
  return patterns;
}

// Normalized added tokens are matched after normalization, so their patterns
// are normalized too (as Hugging Face's AddedVocabulary does).
std::vector<std::u32string> NormalizedPatterns(const Normalizer* normalizer,
                                               const std::vector<AddedToken>& tokens) {
  std::vector<std::u32string> patterns;
  std::vector<NormChar> chars;
  for (const AddedToken& t : tokens) {
    chars.clear();
    AppendChars(t.content, 0, &chars);
    if (normalizer != nullptr) normalizer->Normalize(&chars);
    std::u32string p;
    for (const NormChar& c : chars) p.push_back(c.cp);
    patterns.push_back(std::move(p));
  }
  return patterns;
}

std::vector<AddedToken> Select(const std::vector<AddedToken>& tokens, bool normalized) {
  std::vector<AddedToken> out;
  for (const AddedToken& t : tokens) {
    if (t.normalized == normalized) out.push_back(t);
  }
  return out;
}

}  // namespace

void EncodeScratch::Trim() {
  constexpr size_t kKeep = 1 << 16;
  if (chars.capacity() > kKeep) std::vector<NormChar>().swap(chars);
  if (word_chars.capacity() > kKeep) std::vector<NormChar>().swap(word_chars);
  if (words.capacity() > kKeep) std::vector<Span>().swap(words);
  if (codepoints.capacity() > kKeep) std::u32string().swap(codepoints);
}

TextEncoder::TextEncoder(const Normalizer* normalizer, const PreTokenizer* pre_tokenizer,
                         const Model* model, const std::vector<AddedToken>& added_tokens)
    : normalizer_(normalizer),
      pre_tokenizer_(pre_tokenizer),
      model_(model),
      raw_tokens_(Select(added_tokens, /*normalized=*/false)),
      normalized_tokens_(Select(added_tokens, /*normalized=*/true)),
      raw_matcher_(RawPatterns(raw_tokens_)),
      normalized_matcher_(NormalizedPatterns(normalizer_, normalized_tokens_)) {}

void TextEncoder::Encode(std::string_view text, EncodeScratch* s, std::vector<Piece>* out) const {
  out->clear();
  size_t pos = 0;
  size_t search = 0;  // a match refused for single_word is skipped, not re-searched
  TokenMatcher<char>::Match m;
  while (!raw_matcher_.empty() && raw_matcher_.FindNext(text, search, &m)) {
    const AddedToken& token = raw_tokens_[m.index];
    search = m.end;
    if (token.single_word && (WordBefore(text, m.begin) || WordAfter(text, m.end))) continue;
    size_t begin = m.begin;
    size_t end = m.end;
    if (token.lstrip) begin -= TrailingWhitespace(text.substr(pos, begin - pos));
    if (token.rstrip) end += LeadingWhitespace(text.substr(end));
    EncodeSegment(text.substr(pos, begin - pos), static_cast<int32_t>(pos), s, out);
    out->push_back(
        {token.id, static_cast<int32_t>(begin), static_cast<int32_t>(end), NextSplit(*out), true});
    pos = end;
    search = end;
  }
  EncodeSegment(text.substr(pos), static_cast<int32_t>(pos), s, out);
}

// The pieces between added tokens are normalized separately, as in Hugging Face.
void TextEncoder::EncodeSegment(std::string_view segment, int32_t base, EncodeScratch* s,
                                std::vector<Piece>* out) const {
  if (segment.empty()) return;
  std::vector<NormChar>& chars = s->chars;
  chars.clear();
  AppendChars(segment, base, &chars);
  if (normalizer_ != nullptr) normalizer_->Normalize(&chars);
  if (normalized_matcher_.empty()) {
    EncodeWords(0, chars.size(), s, out);
    return;
  }
  s->codepoints.clear();
  for (const NormChar& c : chars) s->codepoints.push_back(c.cp);
  const std::u32string_view cps = s->codepoints;
  size_t pos = 0;
  TokenMatcher<char32_t>::Match m;
  size_t search = 0;
  while (normalized_matcher_.FindNext(cps, search, &m)) {
    const AddedToken& token = normalized_tokens_[m.index];
    search = m.end;
    if (token.single_word && ((m.begin > 0 && IsWordChar(cps[m.begin - 1])) ||
                              (m.end < cps.size() && IsWordChar(cps[m.end])))) {
      continue;
    }
    size_t begin = m.begin;
    size_t end = m.end;
    while (token.lstrip && begin > pos && IsWhitespace(cps[begin - 1])) --begin;
    while (token.rstrip && end < cps.size() && IsWhitespace(cps[end])) ++end;
    EncodeWords(pos, begin, s, out);
    Piece piece = SpanOf(token.id, chars, begin, end);
    piece.split = NextSplit(*out);
    piece.added = true;
    out->push_back(piece);
    pos = end;
    search = end;
  }
  EncodeWords(pos, chars.size(), s, out);
}

void TextEncoder::EncodeWords(size_t from, size_t to, EncodeScratch* s,
                              std::vector<Piece>* out) const {
  if (from >= to) return;
  std::vector<NormChar>& chars = s->word_chars;
  chars.assign(s->chars.begin() + from, s->chars.begin() + to);
  s->words.assign(1, Span{0, static_cast<uint32_t>(chars.size())});
  if (pre_tokenizer_ != nullptr) pre_tokenizer_->PreTokenize(&chars, &s->words);
  for (const Span w : s->words) {
    if (w.begin >= w.end) continue;
    CharsToUtf8(chars, w.begin, w.end, &s->word, &s->char_starts);
    s->subwords.clear();
    model_->Tokenize(s->word, s->char_starts.data(), static_cast<int>(w.end - w.begin),
                     &s->subwords);
    const int32_t split = NextSplit(*out);
    for (const SubWord& sw : s->subwords) {
      Piece piece = SpanOf(sw.id, chars, w.begin + sw.begin, w.begin + sw.end);
      piece.split = split;
      out->push_back(piece);
    }
  }
}

}  // namespace engine::tokenizer
