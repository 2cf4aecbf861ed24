// Every tokenizer against Hugging Face's Rust `tokenizers` crate itself
// (tests/golden/tokenizer/rust/<name>.jsonl, made by make_rust_reference.mjs
// with the crate's own Node binding): ids, token types and byte offsets of
// every corpus line, of pairs, and of truncation on the right and on the
// left. Exact equality, no tolerance: one different id is a different
// embedding, one different offset a wrong span.
//
// rust/<name>.divergences.txt lists the records where this tokenizer is known
// to differ from the crate (see tests/golden/tokenizer/README.md for what
// they are); every other record must match, and a listed record that starts
// to match fails too, so the list only shrinks. ENCODER_WRITE_DIVERGENCES=1
// rewrites the lists from the current code (for review before committing).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

// "line[+pair_line][@max_length][<]" ('<': truncated on the left).
std::string Key(const Reference& r) {
  std::string key = absl::StrCat(r.line);
  if (r.pair_line) absl::StrAppend(&key, "+", r.pair_line);
  if (r.max_length) absl::StrAppend(&key, "@", r.max_length);
  if (r.side == TruncationSide::kLeft) absl::StrAppend(&key, "<");
  return key;
}

class RustReferenceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RustReferenceTest, IdsTypesAndOffsetsMatchTheRustCrate) {
  const std::string base = absl::StrCat(GoldenDir(), "/rust/", GetParam());
  const std::vector<Reference> refs = ReadReferences(base + ".jsonl");
  ASSERT_GT(refs.size(), 4000u);
  std::set<std::string> known;
  {
    std::ifstream in(base + ".divergences.txt");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') known.insert(line);
    }
  }
  const Tokenizer& tok = NamedTokenizer(GetParam());
  std::vector<std::string> differing;
  std::string unexpected;
  int unexpected_count = 0;
  int fixed = 0;
  for (const Reference& r : refs) {
    ASSERT_TRUE(r.has_offsets) << DescribeReference(r);
    std::string report;
    const bool same = CompareAll(tok, {r}, &report) == 1;
    const bool listed = known.count(Key(r)) > 0;
    if (!same) differing.push_back(Key(r));
    if (!same && !listed && ++unexpected_count <= 10) absl::StrAppend(&unexpected, report);
    if (same && listed) ++fixed;
  }
  std::cout << "[rust] " << GetParam() << ": " << refs.size() - differing.size() << "/"
            << refs.size() << " identical (ids, types, offsets), " << known.size()
            << " known divergences\n";
  if (std::getenv("ENCODER_WRITE_DIVERGENCES") != nullptr) {
    std::ofstream out(base + ".divergences.txt");
    out << "# Records where the C++ tokenizer differs from the Rust crate (rust_reference_test)\n";
    for (const std::string& key : differing) out << key << "\n";
    return;
  }
  EXPECT_EQ(unexpected_count, 0) << "records differing from the crate, not listed:" << unexpected;
  EXPECT_EQ(fixed, 0) << "listed records now match the crate: take them off " << base
                      << ".divergences.txt";
}

INSTANTIATE_TEST_SUITE_P(
    Tokenizers, RustReferenceTest,
    ::testing::Values("bert-base-uncased", "BAAI--bge-m3",
                      "sentence-transformers--paraphrase-multilingual-mpnet-base-v2",
                      "sentence-transformers--all-mpnet-base-v2", "FacebookAI--roberta-base"),
    [](const auto& info) { return TestNameOf(info.param); });

}  // namespace
}  // namespace engine::tokenizer_test
