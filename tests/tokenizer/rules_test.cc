// The tokenizer's rules on small vocabularies: WordPiece, [UNK], the word
// length limit, options, truncation, special tokens and invalid UTF-8.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_data.h"

namespace engine {
namespace {

using ::testing::ElementsAre;

// 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] 4 [MASK], then the words.
std::vector<std::string> SmallVocab() {
  return {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un",  "##aff", "##able", "a",
          "##a",   "hello", "world", ",",     "!",      "é",   "##é",   "hé",     "##llo",
          "Hello", "中",    "国",    "中国",  "σ",      "##σ", "ς",     "##ς",    "i",
          "ab",    "##b",   "##c",   "x",     "##x",    "'",   "s",     "e",      "##e"};
}

std::unique_ptr<Tokenizer> Small(const TokenizerOptions& options = {}) {
  auto tok = Tokenizer::FromVocab(SmallVocab(), options);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return tok.ok() ? *std::move(tok) : nullptr;
}

std::vector<std::string> Tokens(const Tokenizer& tok, std::string_view text) {
  absl::StatusOr<Encoding> enc = tok.Encode(text);
  EXPECT_TRUE(enc.ok()) << enc.status();
  return enc.ok() ? enc->tokens : std::vector<std::string>{};
}

TEST(RulesTest, GreedyLongestMatchFirstWithContinuations) {
  auto tok = Small();
  EXPECT_THAT(Tokens(*tok, "unaffable"), ElementsAre("[CLS]", "un", "##aff", "##able", "[SEP]"));
  EXPECT_THAT(Tokens(*tok, "UNAFFABLE, hello!"),
              ElementsAre("[CLS]", "un", "##aff", "##able", ",", "hello", "!", "[SEP]"));
  EXPECT_THAT(Tokens(*tok, "abbc"), ElementsAre("[CLS]", "ab", "##b", "##c", "[SEP]"));
}

TEST(RulesTest, AWordWithAnUnmatchablePartIsOneUnk) {
  auto tok = Small();
  // "unaffablez": the pieces up to "z" exist, "##z" does not: the whole word is [UNK].
  absl::StatusOr<Encoding> enc = tok->Encode("hello unaffablez world");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->tokens, ElementsAre("[CLS]", "hello", "[UNK]", "world", "[SEP]"));
  EXPECT_EQ(enc->offsets[2], std::make_pair(6, 16));
  EXPECT_THAT(Tokens(*tok, "z"), ElementsAre("[CLS]", "[UNK]", "[SEP]"));
}

TEST(RulesTest, WordsLongerThanTheLimitAreUnk) {
  auto tok = Small();
  EXPECT_EQ(Tokens(*tok, std::string(100, 'a')).size(), 102u);  // a ##a x 99
  EXPECT_THAT(Tokens(*tok, std::string(101, 'a')), ElementsAre("[CLS]", "[UNK]", "[SEP]"));
  // The limit counts characters of the normalized word, not bytes.
  TokenizerOptions cased;
  cased.lower_case = false;
  auto keep_accents = Small(cased);
  std::string e100;
  for (int i = 0; i < 100; ++i) e100 += "é";
  EXPECT_EQ(Tokens(*keep_accents, e100).size(), 102u);
  EXPECT_THAT(Tokens(*keep_accents, e100 + "é"), ElementsAre("[CLS]", "[UNK]", "[SEP]"));
  // Combining accents are stripped first, so 100 e + U+0301 pairs fit.
  std::string decomposed;
  for (int i = 0; i < 100; ++i) decomposed += "e\xCC\x81";
  EXPECT_EQ(Tokens(*tok, decomposed).size(), 102u);

  TokenizerOptions short_words;
  short_words.max_input_chars_per_word = 3;
  auto strict = Small(short_words);
  EXPECT_THAT(Tokens(*strict, "aaa aaaa"),
              ElementsAre("[CLS]", "a", "##a", "##a", "[UNK]", "[SEP]"));
}

TEST(RulesTest, CasedOptionsKeepCaseAndAccents) {
  TokenizerOptions options;
  options.lower_case = false;
  auto tok = Small(options);
  EXPECT_THAT(Tokens(*tok, "Hello héllo"), ElementsAre("[CLS]", "Hello", "hé", "##llo", "[SEP]"));
  options.strip_accents = TokenizerOptions::StripAccents::kYes;
  auto stripped = Small(options);
  EXPECT_THAT(Tokens(*stripped, "Hello héllo"), ElementsAre("[CLS]", "Hello", "hello", "[SEP]"));
  TokenizerOptions lower_keep;
  lower_keep.strip_accents = TokenizerOptions::StripAccents::kNo;
  auto accents = Small(lower_keep);
  EXPECT_THAT(Tokens(*accents, "HÉLLO"), ElementsAre("[CLS]", "hé", "##llo", "[SEP]"));
}

TEST(RulesTest, ChineseCharactersAreIsolatedUnlessDisabled) {
  auto tok = Small();
  EXPECT_THAT(Tokens(*tok, "中国"), ElementsAre("[CLS]", "中", "国", "[SEP]"));
  TokenizerOptions options;
  options.tokenize_chinese_chars = false;
  EXPECT_THAT(Tokens(*Small(options), "中国"), ElementsAre("[CLS]", "中国", "[SEP]"));
}

TEST(RulesTest, LowerCasingIsPerCodePoint) {
  auto tok = Small();
  // No Greek final-sigma rule (Hugging Face's Rust lower-cases per char).
  EXPECT_THAT(Tokens(*tok, "ΣΣ"), ElementsAre("[CLS]", "σ", "##σ", "[SEP]"));
  // U+0130 lower-cases to i + U+0307, and the dot is stripped with the accents.
  EXPECT_THAT(Tokens(*tok, "\xC4\xB0"), ElementsAre("[CLS]", "i", "[SEP]"));
}

TEST(RulesTest, CleaningDropsControlsAndSplitsOnAnyWhitespace) {
  auto tok = Small();
  const std::string text = std::string("hel\x00lo", 6) + "\xE2\x80\x8B" /* ZWSP */ + "\t" +
                           "\xE3\x80\x80" /* ideographic space */ + "world\xEF\xBF\xBD";
  absl::StatusOr<Encoding> enc = tok->Encode(text);
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->tokens, ElementsAre("[CLS]", "hello", "world", "[SEP]"));
  EXPECT_EQ(enc->offsets[1], std::make_pair(0, 6));  // spans the dropped NUL
}

TEST(RulesTest, SpecialTokenLiteralsAreNotSplit) {
  auto tok = Small();
  absl::StatusOr<Encoding> enc = tok->Encode("hello [MASK] world[SEP][mask]");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->tokens, ElementsAre("[CLS]", "hello", "[MASK]", "world", "[SEP]", "[UNK]",
                                       "[UNK]", "[UNK]", "[SEP]"));
  EXPECT_EQ(enc->offsets[2], std::make_pair(6, 12));
  EXPECT_EQ(enc->offsets[4], std::make_pair(18, 23));
}

TEST(RulesTest, OffsetsAreBytesOfTheInput) {
  auto tok = Small();
  absl::StatusOr<Encoding> enc = tok->Encode("  Héllo, 中国!");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->tokens, ElementsAre("[CLS]", "hello", ",", "中", "国", "!", "[SEP]"));
  using P = std::pair<int, int>;
  EXPECT_THAT(enc->offsets,
              ElementsAre(P(0, 0), P(2, 8), P(8, 9), P(10, 13), P(13, 16), P(16, 17), P(0, 0)));
  absl::StatusOr<Encoding> pieces = tok->Encode("unaffable");
  EXPECT_THAT(pieces->offsets, ElementsAre(P(0, 0), P(0, 2), P(2, 5), P(5, 9), P(0, 0)));
}

TEST(RulesTest, PairsGetTypeIdsAndTheirOwnOffsets) {
  auto tok = Small();
  absl::StatusOr<Encoding> enc = tok->EncodePair("hello world", "unaffable");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->ids, ElementsAre(2, 10, 11, 3, 5, 6, 7, 3));
  EXPECT_THAT(enc->token_type_ids, ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  EXPECT_EQ(enc->offsets[4], std::make_pair(0, 2));
  absl::StatusOr<Encoding> empty = tok->EncodePair("", "");
  EXPECT_THAT(empty->ids, ElementsAre(2, 3, 3));
}

TEST(RulesTest, TruncationKeepsTheSpecialTokens) {
  auto tok = Small();
  const std::string text = "hello world hello world hello";  // 5 tokens
  EXPECT_THAT(tok->Encode(text, 4)->ids, ElementsAre(2, 10, 11, 3));
  EXPECT_THAT(tok->Encode(text, 2)->ids, ElementsAre(2, 3));
  EXPECT_EQ(tok->Encode(text, 7)->ids.size(), 7u);
  EXPECT_EQ(tok->Encode(text, 100)->ids.size(), 7u);
  EXPECT_EQ(tok->Encode(text, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tok->Encode(text, -1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tok->EncodePair(text, text, 2).status().code(), absl::StatusCode::kInvalidArgument);
}

// Hugging Face's add_special_tokens=False: the text's tokens alone, and
// max_length counts only them.
TEST(RulesTest, WithoutSpecialTokensOnlyTheTextsTokens) {
  auto tok = Small();
  const std::string text = "hello world hello";
  absl::StatusOr<Encoding> enc = tok->Encode(text, 0, TruncationSide::kRight, false);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(10, 11, 10));
  EXPECT_THAT(enc->offsets,
              ElementsAre(std::make_pair(0, 5), std::make_pair(6, 11), std::make_pair(12, 17)));
  EXPECT_THAT(tok->Encode(text, 2, TruncationSide::kRight, false)->ids, ElementsAre(10, 11));
  EXPECT_THAT(tok->Encode(text, 2, TruncationSide::kLeft, false)->ids, ElementsAre(11, 10));
  enc = tok->EncodePair("hello", "a a", 0, TruncationSide::kRight, false);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(10, 8, 8));
  EXPECT_THAT(enc->token_type_ids, ElementsAre(0, 1, 1));
  // A literal special token in the text is still the text's.
  EXPECT_THAT(tok->Encode("hello [SEP]", 0, TruncationSide::kRight, false)->ids,
              ElementsAre(10, 3));
}

TEST(RulesTest, PairTruncationCutsTheLongestFirst) {
  auto tok = Small();
  const std::string five = "hello world hello world hello";
  const std::string two = "a a";
  // Budget 6 = 9 - 3 specials: the short text keeps its 2, the long one 4.
  absl::StatusOr<Encoding> enc = tok->EncodePair(five, two, 9);
  EXPECT_THAT(enc->ids, ElementsAre(2, 10, 11, 10, 11, 3, 8, 8, 3));
  EXPECT_THAT(enc->token_type_ids, ElementsAre(0, 0, 0, 0, 0, 0, 1, 1, 1));
  // Both too long for budget 5: 2 for the first, 3 for the second (odd one to B when equal).
  enc = tok->EncodePair(five, five, 8);
  EXPECT_THAT(enc->ids, ElementsAre(2, 10, 11, 3, 10, 11, 10, 3));
  // The longer second text is cut, the shorter first kept whole.
  enc = tok->EncodePair(two, five, 7);
  EXPECT_THAT(enc->ids, ElementsAre(2, 8, 8, 3, 10, 11, 3));
}

// only_second, as the Rust crate's TruncationStrategy::OnlySecond (expected
// ids derived by hand from its truncate_encodings: to_remove = total -
// max_length comes off the second text, an error unless it keeps a token;
// the npm binding was not installed to generate them).
TEST(RulesTest, OnlySecondTruncationKeepsTheFirstTextWhole) {
  auto tok = Small();
  const std::string five = "hello world hello world hello";
  const std::string two = "a a";
  constexpr auto kOnlySecond = TruncationStrategy::kOnlySecond;
  // 5 + 2 + 3 specials = 10 > 9: the second text loses 1 although the first is longer.
  absl::StatusOr<Encoding> enc =
      tok->EncodePair(five, two, 9, TruncationSide::kRight, true, kOnlySecond);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(2, 10, 11, 10, 11, 10, 3, 8, 3));
  // A long second text is cut to what is left.
  enc = tok->EncodePair(two, five, 7, TruncationSide::kRight, true, kOnlySecond);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(2, 8, 8, 3, 10, 11, 3));
  // From the left, the second text keeps its end.
  enc = tok->EncodePair(two, "a hello world", 6, TruncationSide::kLeft, true, kOnlySecond);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(2, 8, 8, 3, 11, 3));
  // Short enough: nothing is cut.
  enc = tok->EncodePair(two, two, 7, TruncationSide::kRight, true, kOnlySecond);
  ASSERT_TRUE(enc.ok()) << enc.status();
  EXPECT_THAT(enc->ids, ElementsAre(2, 8, 8, 3, 8, 8, 3));
  // The second text would have to lose all it has: an error, never a cut first text.
  enc = tok->EncodePair(five, two, 8, TruncationSide::kRight, true, kOnlySecond);
  EXPECT_EQ(enc.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RulesTest, InvalidUtf8IsAnErrorNeverACrash) {
  auto tok = Small();
  const std::vector<std::string> bad = {"\x80",
                                        "abc\xBF",
                                        "\xC3",
                                        "\xC3(",
                                        "\xC0\x80",
                                        "\xC1\xBF",
                                        "\xE0\x80\x80",
                                        "\xE0\x9F\xBF",
                                        "\xED\xA0\x80",
                                        "\xED\xBF\xBF",
                                        "\xE2\x82",
                                        "\xF0\x80\x80\x80",
                                        "\xF4\x90\x80\x80",
                                        "\xF5\x80\x80\x80",
                                        "\xFE",
                                        "\xFF",
                                        "hello \xF0\x9F\x98",
                                        std::string("ok\0\xC3", 4)};
  for (const std::string& text : bad) {
    const std::string what = engine::tokenizer_test::Escape(text);
    absl::StatusOr<Encoding> enc = tok->Encode(text);
    EXPECT_EQ(enc.status().code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_EQ(tok->EncodePair("hello", text).status().code(), absl::StatusCode::kInvalidArgument)
        << what;
    EXPECT_EQ(tok->EncodePair(text, "hello").status().code(), absl::StatusCode::kInvalidArgument)
        << what;
  }
  // The extremes of valid UTF-8 are fine.
  for (const std::string text : {"\xF4\x8F\xBF\xBF", "\xEF\xBF\xBF", "\xED\x9F\xBF", "\xC2\x80"}) {
    EXPECT_TRUE(tok->Encode(text).ok()) << engine::tokenizer_test::Escape(text);
  }
}

TEST(RulesTest, RandomBytesGiveIdsOrInvalidArgument) {
  const Tokenizer& tok = engine::tokenizer_test::Bert();
  std::mt19937 rng(7);
  // Mostly valid pieces (ASCII, 2-4 byte characters, special-token literals)
  // with stray bytes mixed in.
  const std::vector<std::string> pieces = {"a",
                                           " ",
                                           "[MASK]",
                                           "[",
                                           "\xC3\xA9",
                                           "\xE4\xB8\xAD",
                                           "\xF0\x9F\x98\x80",
                                           "\xCC\x81",
                                           "\t",
                                           std::string(1, '\0'),
                                           "##",
                                           "\xE2\x80\x8B"};
  int ok = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      if (rng() % 8 == 0) {
        text.push_back(static_cast<char>(rng() % 256));
      } else {
        text += pieces[rng() % pieces.size()];
      }
    }
    absl::StatusOr<Encoding> enc = tok.Encode(text, static_cast<int>(rng() % 20));
    if (enc.ok()) {
      ++ok;
      ASSERT_GE(enc->ids.size(), 2u);
      for (const auto& [b, e] : enc->offsets)
        ASSERT_TRUE(0 <= b && b <= e && e <= static_cast<int>(text.size()));
    } else if (enc.status().code() != absl::StatusCode::kInvalidArgument) {
      FAIL() << enc.status();
    }
  }
  EXPECT_GT(ok, 100);
}

TEST(RulesTest, FromVocabNeedsTheSpecialTokens) {
  std::vector<std::string> no_unk = {"[CLS]", "[SEP]", "hello"};
  EXPECT_EQ(Tokenizer::FromVocab(no_unk, {}).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> no_cls = {"[UNK]", "[SEP]", "hello"};
  EXPECT_EQ(Tokenizer::FromVocab(no_cls, {}).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> minimal = {"[UNK]", "[CLS]", "[SEP]", "hello"};
  auto tok = Tokenizer::FromVocab(minimal, {});
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->unk_id(), 0);
  EXPECT_EQ((*tok)->cls_id(), 1);
  EXPECT_EQ((*tok)->sep_id(), 2);
  EXPECT_EQ((*tok)->pad_id(), 0);  // no [PAD]: 0
  EXPECT_EQ((*tok)->vocab_size(), 4);
}

}  // namespace
}  // namespace engine
