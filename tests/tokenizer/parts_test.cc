// The pipeline parts no shared tokenizer file uses, each in a small
// tokenizer.json written here, with expected tokens worked out by hand from
// the Rust crate's rules (named in each test). Exact string equality.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A WordPiece tokenizer over `tokens` with the given parts (null: none).
std::unique_ptr<Tokenizer> Make(const std::vector<std::string>& tokens, json normalizer,
                                json pre_tokenizer, json decoder = nullptr) {
  json vocab = json::object();
  vocab["[UNK]"] = 0;
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = static_cast<int>(i + 1);
  json j = {{"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", vocab}}},
            {"normalizer", normalizer},
            {"pre_tokenizer", pre_tokenizer},
            {"decoder", decoder},
            {"post_processor", nullptr}};
  auto tok = Tokenizer::FromTokenizerJson(j.dump());
  if (!tok.ok()) throw std::runtime_error(tok.status().ToString());
  return *std::move(tok);
}

std::vector<std::string> Tokens(const Tokenizer& tok, const std::string& text) {
  auto enc = tok.Encode(text);
  if (!enc.ok()) return {enc.status().ToString()};
  return enc->tokens;
}

json Seq(const char* key, std::vector<json> parts) { return {{"type", "Sequence"}, {key, parts}}; }
json Type(const char* type) { return {{"type", type}}; }

TEST(PartsTest, UnicodeFormsAndLowercase) {
  // NFKC folds full-width letters and the ﬁ ligature; Lowercase is per code point.
  auto tok = Make({"abc", "fi"}, Seq("normalizers", {Type("NFKC"), Type("Lowercase")}),
                  Type("WhitespaceSplit"));
  EXPECT_THAT(Tokens(*tok, "\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3 \xEF\xAC\x81"),
              ElementsAre("abc", "fi"));
  // NFD then StripAccents (marks, category M) drops the accents.
  tok = Make({"cafe"}, Seq("normalizers", {Type("NFD"), Type("StripAccents")}),
             Type("WhitespaceSplit"));
  EXPECT_THAT(Tokens(*tok, "caf\xC3\xA9"), ElementsAre("cafe"));
  // NFC composes e + U+0301 into é (not in this vocabulary: unknown).
  tok = Make({"e"}, Type("NFC"), Type("WhitespaceSplit"));
  EXPECT_THAT(Tokens(*tok, "e\xCC\x81"), ElementsAre("[UNK]"));
  tok = Make({"e"}, Type("NFKD"), Type("WhitespaceSplit"));
  EXPECT_THAT(Tokens(*tok, "\xC3\xA9").size(), 1u);  // e + U+0301: one word, unknown
}

TEST(PartsTest, StripPrependReplace) {
  auto tok =
      Make({"_hi"},
           Seq("normalizers", {{{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
                               {{"type", "Prepend"}, {"prepend", "_"}}}),
           nullptr);
  EXPECT_THAT(Tokens(*tok, "  hi \t"), ElementsAre("_hi"));
  EXPECT_THAT(Tokens(*tok, "   "), ElementsAre());  // nothing left: nothing prepended
  tok = Make({"a-b"}, {{"type", "Replace"}, {"pattern", {{"String", "--"}}}, {"content", "-"}},
             nullptr);
  EXPECT_THAT(Tokens(*tok, "a----b"), ElementsAre("[UNK]"));  // "a--b": two replacements
  EXPECT_THAT(Tokens(*tok, "a--b"), ElementsAre("a-b"));
}

TEST(PartsTest, WhitespacePunctuationDigits) {
  const std::vector<std::string> vocab = {"hello", ",",  "world", "!!", "!", "a",   "b",
                                          "a,",    ",b", "1",     "2",  "3", "123", ",,"};
  // \w+|[^\w\s]+
  auto tok = Make(vocab, nullptr, Type("Whitespace"));
  EXPECT_THAT(Tokens(*tok, "hello, world!!"), ElementsAre("hello", ",", "world", "!!"));
  const auto punct = [&](const char* behavior) {
    return Make(vocab, nullptr, {{"type", "Punctuation"}, {"behavior", behavior}});
  };
  EXPECT_THAT(Tokens(*punct("Isolated"), "a,,b"), ElementsAre("a", ",", ",", "b"));
  EXPECT_THAT(Tokens(*punct("Removed"), "a,,b"), ElementsAre("a", "b"));
  EXPECT_THAT(Tokens(*punct("Contiguous"), "a,,b"), ElementsAre("a", ",,", "b"));
  // A delimiter joins the previous piece only after a non-delimiter.
  EXPECT_THAT(Tokens(*punct("MergedWithPrevious"), "a,,b"), ElementsAre("a,", ",", "b"));
  EXPECT_THAT(Tokens(*punct("MergedWithNext"), "a,,b"), ElementsAre("a", ",", ",b"));
  auto digits = Make(vocab, nullptr, {{"type", "Digits"}, {"individual_digits", true}});
  EXPECT_THAT(Tokens(*digits, "a123"), ElementsAre("a", "1", "2", "3"));
  digits = Make(vocab, nullptr, {{"type", "Digits"}, {"individual_digits", false}});
  EXPECT_THAT(Tokens(*digits, "a123"), ElementsAre("a", "123"));
}

TEST(PartsTest, SplitByPattern) {
  const std::vector<std::string> vocab = {"ab", "12", "cd", "hi", "there", ",", " "};
  const auto split = [&](json pattern, const char* behavior, bool invert) {
    return Make(
        vocab, nullptr,
        {{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}});
  };
  EXPECT_THAT(Tokens(*split({{"Regex", "\\d+"}}, "Isolated", false), "ab12cd"),
              ElementsAre("ab", "12", "cd"));
  EXPECT_THAT(Tokens(*split({{"String", " "}}, "Removed", false), "hi there"),
              ElementsAre("hi", "there"));
  // Inverted: the matches are the words, what lies between them is removed.
  EXPECT_THAT(Tokens(*split({{"Regex", "\\w+"}}, "Removed", true), "hi, there"),
              ElementsAre("hi", "there"));
  auto bad = Tokenizer::FromTokenizerJson(
      json({{"model", {{"type", "WordPiece"}, {"vocab", {{"[UNK]", 0}}}}},
            {"pre_tokenizer",
             {{"type", "Split"}, {"pattern", {{"Regex", "(("}}}, {"behavior", "Isolated"}}}})
          .dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("does not compile"));
}

// single_word: an added token matches only where no word character (\w)
// touches it (the Rust crate's AddedVocabulary); otherwise the text is
// tokenized as if the token were not there.
TEST(PartsTest, SingleWordAddedTokens) {
  const auto make = [](bool single_word) {
    json j = {
        {"model",
         {{"type", "WordPiece"}, {"vocab", {{"[UNK]", 0}, {"ab", 1}, {"<x>", 2}, {"a<x>b", 3}}}}},
        {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
        {"added_tokens",
         {{{"id", 2},
           {"content", "<x>"},
           {"single_word", single_word},
           {"normalized", false},
           {"special", false}}}}};
    auto tok = Tokenizer::FromTokenizerJson(j.dump());
    if (!tok.ok()) throw std::runtime_error(tok.status().ToString());
    return *std::move(tok);
  };
  auto single = make(true);
  EXPECT_THAT(Tokens(*single, "ab <x> ab"), ElementsAre("ab", "<x>", "ab"));
  EXPECT_THAT(Tokens(*single, "a<x>b"), ElementsAre("a<x>b"));
  EXPECT_THAT(Tokens(*single, "<x>"), ElementsAre("<x>"));
  EXPECT_THAT(Tokens(*make(false), "a<x>b"), ElementsAre("[UNK]", "<x>", "[UNK]"));
}

TEST(PartsTest, Decoders) {
  // The Llama-style chain: ▁ -> space, <0xXX> bytes to UTF-8, fused, one
  // leading space stripped.
  const std::vector<std::string> vocab = {"\xE2\x96\x81Hello", "<0xC3>", "<0xA9>", "<0xFF>",
                                          "\xE2\x96\x81world"};
  json decoder =
      Seq("decoders",
          {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
           Type("ByteFallback"),
           Type("Fuse"),
           {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}});
  auto tok = Make(vocab, nullptr, nullptr, decoder);
  // Ids: [UNK]=0, ▁Hello=1, <0xC3>=2, <0xA9>=3, <0xFF>=4, ▁world=5.
  EXPECT_EQ(*tok->Decode({1, 2, 3, 5}, true), "Hello\xC3\xA9 world");
  // A byte run that is not UTF-8 gives one U+FFFD per byte token.
  EXPECT_EQ(*tok->Decode({1, 4, 2}, true), "Hello\xEF\xBF\xBD\xEF\xBF\xBD");
  auto bad = tok->Decode({1, 99}, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("index 1"));
}

// A tiny Unigram with Metaspace; scores chosen so that the best segmentation
// is plain to see: "▁he" + "llo" (-7) beats any other; without the "▁",
// "h" + "e" + "llo" (-14.5) beats single letters (-29).
std::unique_ptr<Tokenizer> TinyUnigram(const char* scheme) {
  json vocab = json::array(
      {json::array({"<unk>", 0.0}), json::array({"<s>", 0.0}), json::array({"\xE2\x96\x81", -2.0}),
       json::array({"\xE2\x96\x81he", -3.0}), json::array({"llo", -4.0}), json::array({"h", -5.0}),
       json::array({"e", -5.5}), json::array({"l", -6.0}), json::array({"o", -6.5}),
       json::array({"<0x41>", -10.0}), json::array({"<0xC3>", -10.0}),
       json::array({"<0xA9>", -10.0})});
  json j = {
      {"added_tokens", {{{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Metaspace"},
        {"replacement", "\xE2\x96\x81"},
        {"prepend_scheme", scheme},
        {"split", true}}},
      {"post_processor", nullptr},
      {"decoder", nullptr},
      {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"byte_fallback", true}, {"vocab", vocab}}}};
  auto tok = Tokenizer::FromTokenizerJson(j.dump());
  if (!tok.ok()) throw std::runtime_error(tok.status().ToString());
  return *std::move(tok);
}

TEST(PartsTest, MetaspaceSchemesAndUnigramByteFallback) {
  const std::string m = "\xE2\x96\x81";
  // "always": every segment between added tokens gets "▁".
  EXPECT_THAT(Tokens(*TinyUnigram("always"), "hello<s>hello"),
              ElementsAre(m + "he", "llo", "<s>", m + "he", "llo"));
  // "first": only the segment that starts the text.
  auto first = TinyUnigram("first");
  EXPECT_THAT(Tokens(*first, "hello<s>hello"),
              ElementsAre(m + "he", "llo", "<s>", "h", "e", "llo"));
  // Offsets: the prepended "▁" stands for the first character.
  auto enc = first->Encode("hello<s>hello");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->offsets, ElementsAre(std::pair(0, 2), std::pair(2, 5), std::pair(5, 8),
                                        std::pair(8, 9), std::pair(9, 10), std::pair(10, 13)));
  EXPECT_THAT(Tokens(*TinyUnigram("never"), "hello"), ElementsAre("h", "e", "llo"));
  // Pieces missing from the vocabulary fall back to their bytes, or to <unk>
  // when a byte token is missing too.
  auto always = TinyUnigram("always");
  EXPECT_THAT(Tokens(*always, "A"), ElementsAre(m, "<0x41>"));
  EXPECT_THAT(Tokens(*always, "\xC3\xA9"), ElementsAre(m, "<0xC3>", "<0xA9>"));
  EXPECT_THAT(Tokens(*always, "Z"), ElementsAre(m, "<unk>"));
  // Split: each "▁" starts a word.
  EXPECT_THAT(Tokens(*always, "he he"), ElementsAre(m + "he", m + "he"));
}

TEST(PartsTest, BertDecodeJoinsContinuations) {
  // WordPiece decoder: "##" pieces join; cleanup runs on each token with its
  // leading space (the Rust crate's decode_chain), so " ." and " !" lose the
  // space but the split contraction stays "don ' t" (transformers' separate
  // clean_up_tokenization_spaces over the whole string is not part of the
  // tokenizer).
  auto enc = Bert().Encode("Hello, unaffable world! Don't.");
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(*Bert().Decode(enc->ids, true), "hello, unaffable world! don ' t.");
  EXPECT_EQ(*Bert().Decode(enc->ids, false), "[CLS] hello, unaffable world! don ' t. [SEP]");
}

}  // namespace
}  // namespace engine::tokenizer_test
