// The Unicode facts the normalizer relies on, checked against ICU over every
// code point, plus the UTF-8 decoder and the normalizer's own rules.
#include "unicode.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "normalizers/bert_normalizer.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

std::u32string FullLower(char32_t cp) {
  icu::UnicodeString s(static_cast<UChar32>(cp));
  s.toLower(icu::Locale::getRoot());
  std::u32string out;
  for (int32_t i = 0; i < s.length();) {
    const UChar32 c = s.char32At(i);
    i += U16_LENGTH(c);
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

bool IsScalar(char32_t cp) { return cp < 0xD800 || (cp > 0xDFFF && cp <= 0x10FFFF); }

TEST(UnicodeTest, ToLowerIsTheFullMappingForEveryCodePoint) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (!IsScalar(cp)) continue;
    char32_t out[2];
    const int n = ToLower(cp, out);
    ASSERT_EQ(std::u32string(out, n), FullLower(cp)) << std::hex << "U+" << cp;
  }
}

std::u32string Strip(const std::u32string& s) {
  std::u32string out;
  for (char32_t c : s) {
    char32_t d[kMaxDecomposition];
    const int n = DecomposeNfd(c, d, kMaxDecomposition);
    for (int k = 0; k < n; ++k) {
      if (!IsNonSpacingMark(d[k])) out.push_back(d[k]);
    }
  }
  return out;
}

std::u32string Lower(const std::u32string& s) {
  std::u32string out;
  for (char32_t c : s) out += FullLower(c);
  return out;
}

// The Rust crate strips accents before lower-casing, transformers.js and
// Python after; the normalizer may pick either only because they agree.
TEST(UnicodeTest, LowerCasingAndAccentStrippingCommute) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (!IsScalar(cp)) continue;
    const std::u32string one(1, cp);
    ASSERT_EQ(Lower(Strip(one)), Strip(Lower(one))) << std::hex << "U+" << cp;
  }
}

TEST(UnicodeTest, DecompositionsFitTheBuffer) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (!IsScalar(cp)) continue;
    char32_t d[kMaxDecomposition + 4];
    ASSERT_LT(DecomposeNfd(cp, d, kMaxDecomposition + 4), kMaxDecomposition) << std::hex << cp;
  }
}

TEST(UnicodeTest, Categories) {
  EXPECT_TRUE(IsPunctuation(U'$'));  // ASCII symbol: BERT punctuation
  EXPECT_TRUE(IsPunctuation(U'`'));
  EXPECT_TRUE(IsPunctuation(U'¿'));   // Po
  EXPECT_TRUE(IsPunctuation(U'「'));  // Ps
  EXPECT_FALSE(IsPunctuation(U'€'));  // Sc outside ASCII
  EXPECT_FALSE(IsPunctuation(U'a'));
  EXPECT_TRUE(IsWhitespace(U'\u3000'));
  EXPECT_TRUE(IsWhitespace(U'\u0085'));
  EXPECT_FALSE(IsWhitespace(U'\u200B'));
  // What Hugging Face's crate (tokenizers 0.23.2) drops, probed one code
  // point at a time between two letters: "a\u200Bb" -> "ab", "a\u0378b" -> [UNK].
  EXPECT_TRUE(IsBertControlCategory(U'\u200B'));   // Cf (Unicode 4.0)
  EXPECT_TRUE(IsBertControlCategory(U'\u061C'));   // Cf (Unicode 6.3)
  EXPECT_FALSE(IsBertControlCategory(U'\u08E2'));  // Cf, but assigned in Unicode 9.0
  EXPECT_FALSE(IsBertControlCategory(0x378));      // Cn: kept
  EXPECT_FALSE(IsBertControlCategory(0xFFFF));     // a noncharacter: kept
  EXPECT_TRUE(IsBertControlCategory(0xE000));      // Co
  EXPECT_FALSE(IsBertControlCategory(U'a'));
  EXPECT_TRUE(IsChineseChar(0x20000));
  EXPECT_FALSE(IsChineseChar(0x2B820));  // not in the crate's extension E range
  EXPECT_TRUE(IsChineseChar(0x2B920));
  EXPECT_FALSE(IsChineseChar(0x30000));  // extension G: outside every range
  EXPECT_FALSE(IsChineseChar(U'あ'));
}

TEST(Utf8Test, DecodesAndFindsTheFirstBadByte) {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";
  std::u32string cps;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const int n = DecodeUtf8(text, i, &cp);
    ASSERT_GT(n, 0);
    cps.push_back(cp);
    i += n;
  }
  EXPECT_EQ(cps, U"aé中😀");
  std::string round_trip;
  for (char32_t c : cps) AppendUtf8(c, &round_trip);
  EXPECT_EQ(round_trip, text);
  EXPECT_EQ(FindInvalidUtf8(text), std::string::npos);
  EXPECT_EQ(FindInvalidUtf8("abcdefghij\xC3"), 10u);
  EXPECT_EQ(FindInvalidUtf8("abcdefgh\xED\xA0\x80"), 8u);
}

std::u32string Normalized(const NormalizerOptions& options, std::string_view text) {
  std::vector<NormChar> chars;
  AppendChars(text, 0, &chars);
  BertNormalizer(options).Normalize(&chars);
  std::u32string out;
  for (const NormChar& c : chars) out.push_back(c.cp);
  return out;
}

TEST(NormalizerTest, BertRules) {
  const NormalizerOptions bert;
  EXPECT_EQ(Normalized(bert, "Héllo\tWORLD\xE2\x80\x8B!"), U"hello world!");
  EXPECT_EQ(Normalized(bert, "a中b"), U"a 中 b");
  EXPECT_EQ(Normalized(bert, "\xF0\xA0\x80\x80"), U" \U00020000 ");  // outside the BMP too
  EXPECT_EQ(Normalized(bert, "ΟΔΟΣ"), U"οδοσ");                      // no final sigma
  EXPECT_EQ(Normalized(bert, "\xC4\xB0"), U"i");                     // U+0130
  EXPECT_EQ(Normalized(bert, "\xEA\xB0\x80"), U"\u1100\u1161");      // Hangul decomposes
  NormalizerOptions lower_only = bert;
  lower_only.strip_accents = false;
  EXPECT_EQ(Normalized(lower_only, "\xC4\xB0"), U"i\u0307");
  EXPECT_EQ(Normalized(lower_only, "É"), U"é");
}

TEST(NormalizerTest, CanonicalReorderingSurvivesStripping) {
  // U+1D16D (ccc 226) before U+1D165 (ccc 216): NFD swaps them, neither is Mn.
  const std::string text = "a\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5";
  std::vector<NormChar> chars;
  AppendChars(text, 0, &chars);
  BertNormalizer(NormalizerOptions{}).Normalize(&chars);
  ASSERT_EQ(chars.size(), 3u);
  EXPECT_EQ(chars[1].cp, 0x1D165u);
  EXPECT_EQ(chars[2].cp, 0x1D16Du);
  EXPECT_EQ(chars[1].begin, 5);  // offsets travel with their characters
  EXPECT_EQ(chars[2].begin, 1);
  // A dropped starter (U+0941, Mn with ccc 0) still separates the runs.
  const std::string blocked = "a\xF0\x9D\x85\xAD\xE0\xA5\x81\xF0\x9D\x85\xA5";
  chars.clear();
  AppendChars(blocked, 0, &chars);
  BertNormalizer(NormalizerOptions{}).Normalize(&chars);
  ASSERT_EQ(chars.size(), 3u);
  EXPECT_EQ(chars[1].cp, 0x1D16Du);
  EXPECT_EQ(chars[2].cp, 0x1D165u);
}

}  // namespace
}  // namespace engine::tokenizer
