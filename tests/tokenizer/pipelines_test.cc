// Every tokenizer.json in ../shared/tokenizers against Hugging Face's ids,
// token types and decoded text (tests/golden/tokenizer/pipelines/*.jsonl,
// made by make_pipeline_reference.mjs): exact equality, no tolerance, since
// one different id is a different embedding.
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

// The tokenizers whose whole pipeline is implemented.
const char* const kTokenizers[] = {
    "BAAI--bge-m3",
    "sentence-transformers--paraphrase-multilingual-mpnet-base-v2",
    "sentence-transformers--all-mpnet-base-v2",
    "FacebookAI--roberta-base",
};

std::string ReferencePath(const std::string& name, const char* suffix) {
  return absl::StrCat(GoldenDir(), "/pipelines/", name, suffix);
}

class PipelineTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineTest, IdsAndTypesMatchHuggingFace) {
  const std::vector<Reference> refs = ReadReferences(ReferencePath(GetParam(), ".jsonl"));
  ASSERT_GT(refs.size(), 3000u);
  std::string report;
  const int identical = CompareAll(NamedTokenizer(GetParam()), refs, &report);
  std::cout << "[parity] " << GetParam() << ": " << identical << "/" << refs.size()
            << " identical\n";
  EXPECT_EQ(identical, static_cast<int>(refs.size())) << "first mismatches:" << report;
}

TEST_P(PipelineTest, DecodeMatchesHuggingFace) {
  const Tokenizer& tok = NamedTokenizer(GetParam());
  int checked = 0;
  int reported = 0;
  for (const Reference& r : ReadReferences(ReferencePath(GetParam(), ".jsonl"))) {
    if (!r.has_decoded) continue;
    ++checked;
    absl::StatusOr<std::string> text =
        tok.Decode(std::vector<int32_t>(r.ids.begin(), r.ids.end()), true);
    ASSERT_TRUE(text.ok()) << text.status();
    if (*text != r.decoded && ++reported <= 5) {
      ADD_FAILURE() << DescribeReference(r) << "\n  want \"" << Escape(r.decoded) << "\"\n  got  \""
                    << Escape(*text) << "\"";
    }
  }
  EXPECT_EQ(reported, 0);
  EXPECT_GT(checked, 500);
}

// Where the generator patched transformers.js to the Rust crate, the
// unpatched ids must differ from ours, or the patch would prove nothing.
TEST_P(PipelineTest, DiffersFromUnpatchedTransformersJsWhereDocumented) {
  std::ifstream in(ReferencePath(GetParam(), ".js_divergences.jsonl"));
  ASSERT_TRUE(in);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    Reference r;
    r.line = j.at("line").get<int>();
    r.pair_line = j.value("pair_line", 0);
    absl::StatusOr<Encoding> enc = EncodeReference(NamedTokenizer(GetParam()), r);
    ASSERT_TRUE(enc.ok());
    const std::vector<int> ids(enc->ids.begin(), enc->ids.end());
    const std::vector<int> types(enc->token_type_ids.begin(), enc->token_type_ids.end());
    const auto js_ids = j.at("js_ids").get<std::vector<int>>();
    // Pairs record token types too (RobertaProcessing's are all 0 in Rust).
    const auto js_types = j.value("js_type_ids", types);
    EXPECT_TRUE(ids != js_ids || types != js_types)
        << DescribeReference(r) << " patches " << j.at("patches").dump();
  }
}

// Offsets are bytes of the input: inside it, begin <= end, (0, 0) for the
// post-processor's special tokens.
TEST_P(PipelineTest, OffsetsLieInsideTheText) {
  const Tokenizer& tok = NamedTokenizer(GetParam());
  for (size_t i = 0; i < Corpus().size(); ++i) {
    const std::string& text = Corpus()[i];
    absl::StatusOr<Encoding> enc = tok.Encode(text);
    ASSERT_TRUE(enc.ok());
    ASSERT_EQ(enc->offsets.size(), enc->ids.size());
    for (const auto& [b, e] : enc->offsets) {
      ASSERT_LE(0, b) << "corpus.jsonl:" << i + 1;
      ASSERT_LE(b, e) << "corpus.jsonl:" << i + 1;
      ASSERT_LE(e, static_cast<int>(text.size())) << "corpus.jsonl:" << i + 1;
    }
    EXPECT_EQ(enc->offsets.front(), std::make_pair(0, 0));
    EXPECT_EQ(enc->offsets.back(), std::make_pair(0, 0));
  }
}

// RobertaProcessing's trim_offsets: "Ġworld" covers "world", not the space
// before it (Hugging Face's offsets for roberta-base, worked out from
// processors/byte_level.rs: leading "Ġ" moves the start).
TEST(RobertaOffsetsTest, TrimOffsetsDropsTheLeadingSpace) {
  const Tokenizer& tok = NamedTokenizer("FacebookAI--roberta-base");
  auto enc = tok.Encode("Hello world  again");
  ASSERT_TRUE(enc.ok());
  ASSERT_THAT(enc->tokens, ::testing::ElementsAre("<s>", "Hello",
                                                  "\xC4\xA0"
                                                  "world",
                                                  "\xC4\xA0",
                                                  "\xC4\xA0"
                                                  "again",
                                                  "</s>"));
  EXPECT_THAT(enc->offsets,
              ::testing::ElementsAre(std::pair(0, 0), std::pair(0, 5), std::pair(6, 11),
                                     std::pair(12, 12), std::pair(13, 18), std::pair(0, 0)));
}

INSTANTIATE_TEST_SUITE_P(SharedTokenizers, PipelineTest, ::testing::ValuesIn(kTokenizers),
                         [](const auto& info) { return TestNameOf(info.param); });

}  // namespace
}  // namespace engine::tokenizer_test
