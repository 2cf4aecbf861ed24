// Every tokenizer against Hugging Face's Rust `tokenizers` crate itself
// (tests/golden/tokenizer/rust/<name>.jsonl, made by make_rust_reference.mjs
// with the crate's own Node binding): ids, token types and byte offsets of
// every corpus line, of pairs, and of truncation on the right and on the
// left, the same without the post-processor's special tokens
// (add_special_tokens false) for the models' prompts and a sample of lines,
// and the decoded text of every third line (and of those without special
// tokens, also keeping the special ones). Exact equality, no tolerance: one
// different id is a different embedding, one different offset a wrong span.
// Every record must match.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

// Ids, token types and offsets of every record.
void ExpectEncodingsMatch(const std::string& name, const Tokenizer& tok) {
  const std::vector<Reference>& refs = RustReferences(name);
  ASSERT_GT(refs.size(), 3000u);
  int pairs = 0;
  int truncated = 0;
  int plain = 0;
  for (const Reference& r : refs) {
    ASSERT_TRUE(r.has_offsets) << DescribeReference(r);
    pairs += r.pair_line != 0;
    truncated += r.max_length != 0;
    plain += !r.add_special_tokens;
  }
  ASSERT_GT(pairs, 150);
  ASSERT_GT(truncated, 400);
  ASSERT_GT(plain, 300);
  std::string report;
  const int same = CompareAll(tok, refs, &report);
  std::cout << "[rust] " << name << ": " << same << "/" << refs.size()
            << " identical (ids, types, offsets; " << pairs << " pairs, " << truncated
            << " truncated, " << plain << " without special tokens)\n";
  EXPECT_EQ(same, static_cast<int>(refs.size())) << report;
}

// The decoded text of the records that carry it, skipping and keeping the
// special tokens.
void ExpectDecodesMatch(const std::string& name, const Tokenizer& tok) {
  int checked = 0;
  int checked_special = 0;
  int reported = 0;
  const auto check = [&](const Reference& r, bool skip_special, const std::string& want) {
    absl::StatusOr<std::string> text =
        tok.Decode(std::vector<int32_t>(r.ids.begin(), r.ids.end()), skip_special);
    ASSERT_TRUE(text.ok()) << text.status();
    if (*text != want && ++reported <= 5) {
      ADD_FAILURE() << DescribeReference(r) << " skip_special_tokens=" << skip_special
                    << "\n  want \"" << Escape(want) << "\"\n  got  \"" << Escape(*text) << "\"";
    }
  };
  for (const Reference& r : RustReferences(name)) {
    if (r.has_decoded) {
      ++checked;
      check(r, true, r.decoded);
    }
    if (r.has_decoded_special) {
      ++checked_special;
      check(r, false, r.decoded_special);
    }
  }
  std::cout << "[rust] " << name << ": decoded " << checked << " (skipping special tokens), "
            << checked_special << " (keeping them)\n";
  EXPECT_EQ(reported, 0);
  EXPECT_GT(checked, 500);
  EXPECT_GT(checked_special, 300);
}

class RustReferenceTest : public ::testing::TestWithParam<const char*> {};

// One test per tokenizer for both checks: ctest runs each test in a process
// of its own, and loading the tokenizer is most of a test's time
// (EmbeddingGemma's 33 MB tokenizer.json: 0.7 s, about 3 s under ASan).
TEST_P(RustReferenceTest, EncodingsAndDecodesMatchTheRustCrate) {
  const Tokenizer& tok = NamedTokenizer(GetParam());
  ASSERT_NO_FATAL_FAILURE(ExpectEncodingsMatch(GetParam(), tok));
  ExpectDecodesMatch(GetParam(), tok);
}

INSTANTIATE_TEST_SUITE_P(
    Tokenizers, RustReferenceTest,
    ::testing::Values("bert-base-uncased", "BAAI--bge-m3",
                      "sentence-transformers--paraphrase-multilingual-mpnet-base-v2",
                      "sentence-transformers--all-mpnet-base-v2", "FacebookAI--roberta-base",
                      // Byte-level BPE with the Qwen split regex, NFC and `$A <|endoftext|>`.
                      "Qwen--Qwen3-Embedding-0.6B",
                      // Byte-level BPE, NFC, normalized added tokens, `[CLS] $A [SEP]`.
                      "answerdotai--ModernBERT-base",
                      // BPE with byte_fallback (Gemma 3). Gemma Terms of Use: read in place
                      // from ../shared, never copied into the repository.
                      "google--embeddinggemma-300m",
                      // Pipelines of parts those tokenizers do not use (parts/*.json).
                      "parts--nfkc-whitespace", "parts--nfd-punctuation-digits", "parts--nfc-split",
                      "parts--nfkd-word-level", "parts--byte-level-prefix-space",
                      "parts--bpe-ignore-merges"),
    [](const auto& info) { return TestNameOf(info.param); });

// A BERT model directory with only vocab.txt (no tokenizer.json) tokenizes
// exactly as the crate does with bert-base-uncased's tokenizer.json.
TEST(RustReferenceVocabTxtTest, VocabTxtPathGivesTheSameEncodings) {
  const std::string dir = MakeTempDir();
  for (const char* name : {"vocab.txt", "tokenizer_config.json"}) {
    std::filesystem::copy_file(BertDir() + "/" + name, dir + "/" + name);
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok = Tokenizer::Load(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  const std::vector<Reference>& refs = RustReferences("bert-base-uncased");
  std::string report;
  EXPECT_EQ(CompareAll(**tok, refs, &report), static_cast<int>(refs.size())) << report;
}

}  // namespace
}  // namespace engine::tokenizer_test
