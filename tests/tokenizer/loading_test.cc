// Tokenizer::Load: tokenizer.json and vocab.txt (+ tokenizer_config.json),
// variants of their settings, and errors that name the file at fault.
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json BertJson() { return json::parse(ReadFile(BertDir() + "/tokenizer.json")); }

// A directory holding `tokenizer_json` as tokenizer.json.
std::string DirWithJson(const std::string& tokenizer_json) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/tokenizer.json", tokenizer_json);
  return dir;
}

std::vector<int32_t> Ids(const Tokenizer& tok, std::string_view text) {
  absl::StatusOr<Encoding> enc = tok.Encode(text);
  EXPECT_TRUE(enc.ok()) << enc.status();
  return enc.ok() ? enc->ids : std::vector<int32_t>{};
}

TEST(LoadingTest, BertFromTokenizerJson) {
  const Tokenizer& tok = Bert();
  EXPECT_EQ(tok.vocab_size(), 30522);
  EXPECT_EQ(tok.cls_id(), 101);
  EXPECT_EQ(tok.sep_id(), 102);
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.unk_id(), 100);
  EXPECT_THAT(Ids(tok, "Hello, world!"), ElementsAre(101, 7592, 1010, 2088, 999, 102));
}

TEST(LoadingTest, VocabTxtWithoutConfigUsesBertDefaults) {
  const std::string dir = MakeTempDir();
  std::filesystem::copy_file(BertDir() + "/vocab.txt", dir + "/vocab.txt");
  auto tok = Tokenizer::Load(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 30522);
  EXPECT_THAT(Ids(**tok, "Héllo [MASK]"), ElementsAre(101, 7592, 103, 102));
}

TEST(LoadingTest, VocabTxtWithCrlfLinesAndCasedConfig) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nHello\r\nhello\r\n");
  WriteFile(dir + "/tokenizer_config.json",
            R"({"do_lower_case": false, "unk_token": {"content": "[UNK]", "special": true}})");
  auto tok = Tokenizer::Load(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_THAT(Ids(**tok, "Hello hello HELLO"), ElementsAre(2, 4, 5, 1, 3));
}

TEST(LoadingTest, AddedTokensDecoderExtendsTheVocabulary) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  WriteFile(dir + "/tokenizer_config.json",
            R"({"added_tokens_decoder": {"5": {"content": "<extra>", "special": true}}})");
  auto tok = Tokenizer::Load(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 6);
  EXPECT_THAT(Ids(**tok, "hello<extra>hello"), ElementsAre(2, 4, 5, 4, 3));
}

TEST(LoadingTest, NormalizedAndStrippingAddedTokens) {
  json j = BertJson();
  j["added_tokens"].push_back({{"id", 30522},
                               {"content", "<Ent>"},
                               {"special", false},
                               {"normalized", true},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"single_word", false}});
  for (auto& t : j["added_tokens"]) {
    if (t["content"] == "[MASK]") t["lstrip"] = true;
  }
  auto tok = Tokenizer::Load(DirWithJson(j.dump()));
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 30523);
  // Matched after lower-casing, before the pre-tokenizer splits "<", ">".
  absl::StatusOr<Encoding> enc = (*tok)->Encode("Hello <ENT> world");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->ids, ElementsAre(101, 7592, 30522, 2088, 102));
  EXPECT_EQ(enc->offsets[2], std::make_pair(6, 11));
  // lstrip: the match takes the spaces before it.
  enc = (*tok)->Encode("a  [MASK]");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->ids, ElementsAre(101, 1037, 103, 102));
  EXPECT_EQ(enc->offsets[2], std::make_pair(1, 9));
}

TEST(LoadingTest, BertProcessingPostProcessor) {
  json j = BertJson();
  j["post_processor"] = {
      {"type", "BertProcessing"}, {"sep", {"[SEP]", 102}}, {"cls", {"[CLS]", 101}}};
  auto tok = Tokenizer::Load(DirWithJson(j.dump()));
  ASSERT_TRUE(tok.ok()) << tok.status();
  absl::StatusOr<Encoding> enc = (*tok)->EncodePair("hello", "world");
  ASSERT_TRUE(enc.ok());
  EXPECT_THAT(enc->ids, ElementsAre(101, 7592, 102, 2088, 102));
  EXPECT_THAT(enc->token_type_ids, ElementsAre(0, 0, 0, 1, 1));
}

TEST(LoadingTest, NormalizerSettingsOfTokenizerJson) {
  json j = BertJson();
  j["normalizer"]["lowercase"] = false;  // strip_accents null follows it
  auto cased = Tokenizer::Load(DirWithJson(j.dump()));
  ASSERT_TRUE(cased.ok()) << cased.status();
  EXPECT_THAT(Ids(**cased, "Hello hello"), ElementsAre(101, 100, 7592, 102));
  j["normalizer"] = nullptr;  // no normalizer at all: controls stay in words
  auto raw = Tokenizer::Load(DirWithJson(j.dump()));
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_THAT(Ids(**raw, std::string("hel\x01lo hello", 12)), ElementsAre(101, 100, 7592, 102));
}

void ExpectError(const std::string& dir, absl::StatusCode code, const std::string& file,
                 const std::string& detail) {
  auto tok = Tokenizer::Load(dir);
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), code) << tok.status();
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr(file));
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr(detail));
}

TEST(LoadingTest, SourceNamesTheFilesRead) {
  EXPECT_EQ(Bert().source(), BertDir() + "/tokenizer.json");
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  auto vocab_only = Tokenizer::Load(dir);
  ASSERT_TRUE(vocab_only.ok()) << vocab_only.status();
  EXPECT_EQ((*vocab_only)->source(), dir + "/vocab.txt");
  WriteFile(dir + "/tokenizer_config.json", R"({"do_lower_case": true})");
  auto with_config = Tokenizer::Load(dir);
  ASSERT_TRUE(with_config.ok()) << with_config.status();
  EXPECT_EQ((*with_config)->source(), dir + "/vocab.txt + " + dir + "/tokenizer_config.json");
}

// The files' own faults: the OS's reason, or where the JSON breaks.
TEST(LoadingTest, FileErrorsGiveTheReasonAndJsonErrorsTheLine) {
  ExpectError(DirWithJson("{\n  \"version\": \"1.0\",\n  \"model\": {\"type\": \"WordPiece\"\n"),
              absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "not valid JSON at line 4, column 1: syntax error while parsing object - unexpected "
              "end of input; expected '}'");

  std::string dir = MakeTempDir();
  std::filesystem::create_directory(dir + "/tokenizer.json");
  ExpectError(dir, absl::StatusCode::kFailedPrecondition, dir + "/tokenizer.json",
              "cannot read: Is a directory");

  dir = MakeTempDir();
  std::filesystem::create_symlink("../../blobs/77aa", dir + "/tokenizer.json");
  ExpectError(dir, absl::StatusCode::kNotFound, dir + "/tokenizer.json",
              "cannot open: No such file or directory (a symlink to ../../blobs/77aa, which is "
              "missing)");

  dir = MakeTempDir();
  WriteFile(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n");
  WriteFile(dir + "/tokenizer_config.json", "{\n  \"do_lower_case\": True\n}\n");
  ExpectError(dir, absl::StatusCode::kInvalidArgument, dir + "/tokenizer_config.json",
              "not valid JSON at line 2, column 20: syntax error while parsing value - invalid "
              "literal");
}

TEST(LoadingTest, ErrorsNameTheFile) {
  ExpectError("/nonexistent/model", absl::StatusCode::kNotFound, "/nonexistent/model",
              "neither tokenizer.json nor vocab.txt");
  ExpectError(DirWithJson("{not json"), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "not valid JSON");
  ExpectError(DirWithJson("[]"), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "not a JSON object");
  ExpectError(DirWithJson("{}"), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "missing \"model\"");

  json other_model = BertJson();
  other_model["model"]["type"] = "NoSuchModel";
  ExpectError(DirWithJson(other_model.dump()), absl::StatusCode::kUnimplemented, "tokenizer.json",
              "model: type \"NoSuchModel\" is not implemented");

  // WordLevel gives every word outside the vocabulary its unknown token.
  json word_level = BertJson();
  word_level["model"] = {{"type", "WordLevel"}, {"vocab", word_level["model"]["vocab"]}};
  ExpectError(DirWithJson(word_level.dump()), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "unknown token \"<unk>\" is not in the vocabulary");

  // An integer field holding a float, or an integer beyond its type: an error
  // naming the field, never a conversion (undefined for 1.7e123 to int).
  for (const json& bad : {json(1.6666e123), json(2.5), json(int64_t{1} << 40)}) {
    json not_an_int = BertJson();
    not_an_int["model"]["max_input_chars_per_word"] = bad;
    ExpectError(DirWithJson(not_an_int.dump()), absl::StatusCode::kInvalidArgument,
                "tokenizer.json", "max_input_chars_per_word is not an integer in range");
  }

  json no_unk = BertJson();
  no_unk["model"]["unk_token"] = "<unk>";
  ExpectError(DirWithJson(no_unk.dump()), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "<unk>");

  // A part type that is not implemented is an error naming it, wherever it is.
  json unknown = BertJson();
  unknown["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NoSuchNormalizer"}}}}};
  ExpectError(DirWithJson(unknown.dump()), absl::StatusCode::kUnimplemented, "tokenizer.json",
              "normalizer.normalizers[0]: type \"NoSuchNormalizer\" is not implemented");
  unknown = BertJson();
  unknown["decoder"] = {{"type", "NoSuchDecoder"}};
  ExpectError(DirWithJson(unknown.dump()), absl::StatusCode::kUnimplemented, "tokenizer.json",
              "NoSuchDecoder");

  json bad_id = BertJson();
  bad_id["model"]["vocab"]["hello"] = -5;
  ExpectError(DirWithJson(bad_id.dump()), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "model.vocab[\"hello\"]");

  json wrong_type = BertJson();
  wrong_type["normalizer"]["lowercase"] = "yes";
  ExpectError(DirWithJson(wrong_type.dump()), absl::StatusCode::kInvalidArgument, "tokenizer.json",
              "normalizer.lowercase");

  const std::string bad_vocab = MakeTempDir();
  WriteFile(bad_vocab + "/vocab.txt", "[UNK]\n[CLS]\n[SEP]\nbad\xFFtoken\n");
  ExpectError(bad_vocab, absl::StatusCode::kInvalidArgument, "vocab.txt", "UTF-8");

  const std::string bad_config = MakeTempDir();
  WriteFile(bad_config + "/vocab.txt", "[UNK]\n[CLS]\n[SEP]\n");
  WriteFile(bad_config + "/tokenizer_config.json", R"({"do_lower_case": "yes"})");
  ExpectError(bad_config, absl::StatusCode::kInvalidArgument, "tokenizer_config.json",
              "do_lower_case");

  const std::string no_sep = MakeTempDir();
  WriteFile(no_sep + "/vocab.txt", "[UNK]\n[CLS]\nhello\n");
  ExpectError(no_sep, absl::StatusCode::kInvalidArgument, "vocab.txt", "[CLS]/[SEP]");
}

}  // namespace
}  // namespace engine::tokenizer_test
