// The added-token search (token_matcher.h): leftmost, then longest, the first
// of equal patterns, over bytes and over code points; expectations worked out
// by hand. Against the crate on real tokenizers (Gemma's 6,415 added tokens,
// ModernBERT's normalized ones): rust_reference_test.
#include "token_matcher.h"

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace engine::tokenizer {
namespace {

using ::testing::ElementsAre;

// Every match from the start, each search resuming at the previous match's end.
template <typename CharT>
std::vector<std::tuple<size_t, size_t, int>> AllMatches(const TokenMatcher<CharT>& m,
                                                        std::basic_string_view<CharT> text) {
  std::vector<std::tuple<size_t, size_t, int>> out;
  typename TokenMatcher<CharT>::Match match;
  for (size_t pos = 0; m.FindNext(text, pos, &match); pos = match.end) {
    out.emplace_back(match.begin, match.end, match.index);
  }
  return out;
}

TEST(TokenMatcherTest, LeftmostThenLongest) {
  // 0 "<a"  1 "<a>"  2 "<ab>"  3 "b>"  4 "x<a"
  const TokenMatcher<char> m({"<a", "<a>", "<ab>", "b>", "x<a"});
  EXPECT_FALSE(m.empty());
  // "x<a" starts first (0) though "<a>" (1..4) is longer; '>' (3) starts no
  // pattern; at 4 "<ab>" is longer than "<a"; at 8 "<a" has no '>' after it.
  EXPECT_THAT(AllMatches<char>(m, "x<a><ab><a"),
              ElementsAre(std::tuple(0, 3, 4), std::tuple(4, 8, 2), std::tuple(8, 10, 0)));
  // "<ab" is a prefix of "<ab>", not a pattern: the shorter "<a" matches.
  EXPECT_THAT(AllMatches<char>(m, "<ab"), ElementsAre(std::tuple(0, 2, 0)));
  EXPECT_THAT(AllMatches<char>(m, "ab b>"), ElementsAre(std::tuple(3, 5, 3)));
  EXPECT_THAT(AllMatches<char>(m, ""), ElementsAre());
  EXPECT_THAT(AllMatches<char>(m, "no match here"), ElementsAre());
}

TEST(TokenMatcherTest, SearchStartsAtThePosition) {
  const TokenMatcher<char> m({"ab"});
  TokenMatcher<char>::Match match;
  ASSERT_TRUE(m.FindNext("abab", 1, &match));
  EXPECT_EQ(match.begin, 2u);
  EXPECT_EQ(match.end, 4u);
  EXPECT_FALSE(m.FindNext("abab", 3, &match));
}

TEST(TokenMatcherTest, EqualPatternsReportTheFirstAndEmptyOnesNeverMatch) {
  const TokenMatcher<char> m({"", "[MASK]", "[MASK]"});
  EXPECT_THAT(AllMatches<char>(m, "a [MASK] b"), ElementsAre(std::tuple(2, 8, 1)));
  EXPECT_TRUE(TokenMatcher<char>({""}).empty());
  EXPECT_TRUE(TokenMatcher<char>({}).empty());
}

TEST(TokenMatcherTest, BytesAboveAsciiAndCodePoints) {
  // "▁▁" (U+2581 twice) and "—" (U+2014) share their first byte 0xE2.
  const TokenMatcher<char> bytes({"\xE2\x96\x81\xE2\x96\x81", "\xE2\x80\x94"});
  EXPECT_THAT(AllMatches<char>(bytes, "a\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81\xE2\x80\x94"),
              ElementsAre(std::tuple(1, 7, 0), std::tuple(10, 13, 1)));
  // Code points whose low bytes are equal (U+0141, U+0241) are told apart.
  const TokenMatcher<char32_t> cps({U"\u0141x", U"\u0241", U"\U0001F600"});
  EXPECT_THAT(AllMatches<char32_t>(cps, U"\u0241\u0141\u0141x\U0001F600"),
              ElementsAre(std::tuple(0, 1, 1), std::tuple(2, 4, 0), std::tuple(4, 5, 2)));
}

}  // namespace
}  // namespace engine::tokenizer
