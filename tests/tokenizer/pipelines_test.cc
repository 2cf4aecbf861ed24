// Properties of every tokenizer.json in ../shared/tokenizers that hold for any
// text (offsets inside the input) and RobertaProcessing's offset trimming.
// Their ids, offsets and decoding against the Rust crate: rust_reference_test.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

class PipelineTest : public ::testing::TestWithParam<const char*> {};

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
