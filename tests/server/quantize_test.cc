// Quantized embeddings (server/core/model/quantize.h) against numpy: the fixture
// tests/golden/quantized/quantized.json (make_quantized.py: sentence-
// transformers' quantize_embeddings expressions) must come out exactly, every
// integer and every bit. Then what numpy leaves undefined (values outside the
// calibration range), the calibration file reader and --quantization-ranges.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/app/quantization_flag.h"
#include "server/core/model/quantization_ranges.h"
#include "server/core/model/quantize.h"
#include "server/http/json_quantized.h"
#include "tests/support/files.h"

namespace server::core {
namespace {

using nlohmann::json;

json Fixture() {
  return json::parse(testing_support::ReadFile(GOLDEN_DIR "/quantized/quantized.json"));
}

QuantizationRanges RangesOf(const json& ranges) {
  QuantizationRanges out;
  for (const json& v : ranges[0]) out.minimum.push_back(static_cast<float>(v.get<double>()));
  for (const json& v : ranges[1]) out.maximum.push_back(static_cast<float>(v.get<double>()));
  return out;
}

TEST(QuantizeTest, MatchesNumpyExactly) {
  const json fixture = Fixture();
  int compared = 0;
  for (const auto& [name, c] : fixture["cases"].items()) {
    const QuantizationRanges ranges = RangesOf(c["ranges"]);
    for (const char* type_name : {"int8", "uint8", "binary", "ubinary"}) {
      const EmbeddingType type = *EmbeddingTypeFromName(type_name);
      for (size_t row = 0; row < c["embeddings"].size(); ++row) {
        std::vector<float> values;
        for (const json& v : c["embeddings"][row]) {
          values.push_back(static_cast<float>(v.get<double>()));
        }
        absl::StatusOr<std::string> bytes = Quantize(values, type, &ranges);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        const std::vector<int> want = c[type_name][row].get<std::vector<int>>();
        EXPECT_EQ(QuantizedIntegers(*bytes, type), want)
            << name << " " << type_name << " row " << row;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 4 * (6 + 3));
}

TEST(QuantizeTest, BinaryBytesAreSignBitsMostSignificantFirst) {
  // 1, 0, -1, 2 | 0 x 4 | 3: bits 1001 0000 1(0000000).
  const std::vector<float> values = {1, 0, -1, 2, 0, 0, 0, 0, 3};
  absl::StatusOr<std::string> ubinary = Quantize(values, EmbeddingType::kUbinary, nullptr);
  ASSERT_TRUE(ubinary.ok());
  EXPECT_EQ(QuantizedIntegers(*ubinary, EmbeddingType::kUbinary), (std::vector<int>{0x90, 0x80}));
  absl::StatusOr<std::string> binary = Quantize(values, EmbeddingType::kBinary, nullptr);
  ASSERT_TRUE(binary.ok());
  EXPECT_EQ(QuantizedIntegers(*binary, EmbeddingType::kBinary),
            (std::vector<int>{0x90 - 128, 0x80 - 128}));
}

TEST(QuantizeTest, OutsideTheCalibrationRangeIsClamped) {
  QuantizationRanges ranges;
  ranges.minimum = {-1, -1, -1, -1, 0};
  ranges.maximum = {1, 1, 1, 1, 0};  // the last: zero width
  const std::vector<float> values = {-5, 5, -1.001f, 1.001f, 0.5f};
  absl::StatusOr<std::string> int8 = Quantize(values, EmbeddingType::kInt8, &ranges);
  ASSERT_TRUE(int8.ok());
  EXPECT_EQ(QuantizedIntegers(*int8, EmbeddingType::kInt8),
            (std::vector<int>{-128, 127, -128, 127, 127}));
  absl::StatusOr<std::string> uint8 = Quantize(values, EmbeddingType::kUint8, &ranges);
  ASSERT_TRUE(uint8.ok());
  EXPECT_EQ(QuantizedIntegers(*uint8, EmbeddingType::kUint8),
            (std::vector<int>{0, 255, 0, 255, 255}));
  // NaN (0 / 0 on a zero-width dimension) gives the lowest value.
  const std::vector<float> at_zero = {0, 0, 0, 0, 0};
  EXPECT_EQ(
      QuantizedIntegers(*Quantize(at_zero, EmbeddingType::kUint8, &ranges), EmbeddingType::kUint8)
          .back(),
      0);
}

TEST(QuantizeTest, Int8NeedsRangesCoveringTheVector) {
  const std::vector<float> values = {0.1f, 0.2f, 0.3f};
  absl::Status missing = CheckQuantizable(EmbeddingType::kInt8, nullptr, 3, "m");
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("--quantization-ranges"), std::string::npos) << missing;
  EXPECT_EQ(Quantize(values, EmbeddingType::kUint8, nullptr).status().code(),
            absl::StatusCode::kFailedPrecondition);
  QuantizationRanges two;
  two.minimum = {0, 0};
  two.maximum = {1, 1};
  EXPECT_EQ(Quantize(values, EmbeddingType::kInt8, &two).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A Matryoshka cut uses the first columns.
  EXPECT_TRUE(CheckQuantizable(EmbeddingType::kInt8, &two, 1, "m").ok());
  EXPECT_TRUE(CheckQuantizable(EmbeddingType::kBinary, nullptr, 3, "m").ok());
}

TEST(QuantizationRangesTest, ReadsTheFileAndChecksItsShapeAndSize) {
  testing_support::TempDir dir;
  const std::string good = dir.path() + "/good.json";
  testing_support::WriteFile(good, R"({"ranges": [[-1, -0.5, 0], [1, 0.5, 0.25]]})");
  absl::StatusOr<QuantizationRanges> ranges = ReadQuantizationRanges(good);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  EXPECT_EQ(ranges->minimum, (std::vector<float>{-1, -0.5f, 0}));
  EXPECT_EQ(ranges->maximum, (std::vector<float>{1, 0.5f, 0.25f}));
  EXPECT_TRUE(LoadQuantizationRanges(good, "", 3).ok());
  absl::Status wrong_size = LoadQuantizationRanges(good, "", 4).status();
  EXPECT_EQ(wrong_size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_size.message().find("3 dimensions, but the model's embedding has 4"),
            std::string::npos)
      << wrong_size;
  for (const char* bad :
       {R"({"ranges": [[0, 1]]})", R"({"ranges": [[0, 1], [1]]})", R"({"ranges": [[1], [0]]})",
        R"({"ranges": [["a"], [1]]})", "[[", R"({"other": 1})"}) {
    testing_support::WriteFile(dir.path() + "/bad.json", bad);
    EXPECT_EQ(ReadQuantizationRanges(dir.path() + "/bad.json").status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ReadQuantizationRanges(dir.path() + "/absent.json").status().code(),
            absl::StatusCode::kNotFound);
  // Shipped in the model directory, or none.
  absl::StatusOr<std::shared_ptr<const QuantizationRanges>> none =
      LoadQuantizationRanges("", dir.path(), 3);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  testing_support::WriteFile(dir.path() + "/quantization_ranges.json",
                             testing_support::ReadFile(good));
  absl::StatusOr<std::shared_ptr<const QuantizationRanges>> shipped =
      LoadQuantizationRanges("", dir.path(), 3);
  ASSERT_TRUE(shipped.ok());
  ASSERT_NE(*shipped, nullptr);
  EXPECT_EQ((*shipped)->size(), 3);
}

TEST(QuantizationRangesTest, FlagTakesOneFileOrNamedFiles) {
  ServerConfig config;
  ASSERT_TRUE(ParseQuantizationRangesFlag("/r.json", &config).ok());
  EXPECT_EQ(config.quantization_ranges, (std::map<std::string, std::string>{{"", "/r.json"}}));
  ASSERT_TRUE(ParseQuantizationRangesFlag("a=/a.json,b=/b.json", &config).ok());
  EXPECT_EQ(config.quantization_ranges,
            (std::map<std::string, std::string>{{"a", "/a.json"}, {"b", "/b.json"}}));
  EXPECT_FALSE(ParseQuantizationRangesFlag("a=/a.json,/b.json", &config).ok());
  EXPECT_FALSE(ParseQuantizationRangesFlag("a=/a.json,a=/b.json", &config).ok());
  ASSERT_TRUE(ParseQuantizationRangesFlag("", &config).ok());
  EXPECT_TRUE(config.quantization_ranges.empty());
}

}  // namespace
}  // namespace server::core

namespace server::http {
namespace {

TEST(CohereEmbedTest, ParsesTypesTruncationAndInputType) {
  absl::StatusOr<CohereEmbedCall> call = ParseCohereEmbed(
      R"({"texts": ["a", "b"], "embedding_types": ["int8", "float", "int8"],
          "truncate": "START", "input_type": "search_query", "output_dimension": 8})");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->types, (std::vector<core::EmbeddingType>{core::EmbeddingType::kInt8,
                                                           core::EmbeddingType::kFloat}));
  EXPECT_EQ(call->texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(call->request.truncate, true);
  EXPECT_EQ(call->request.truncation_side, engine::TruncationSide::kLeft);
  EXPECT_EQ(call->request.dimensions, 8);
  EXPECT_EQ(call->input_type, "search_query");

  absl::StatusOr<CohereEmbedCall> defaults = ParseCohereEmbed(R"({"texts": ["a"]})");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->types, std::vector<core::EmbeddingType>{core::EmbeddingType::kFloat});
  EXPECT_EQ(defaults->request.truncate, true);  // END
  EXPECT_EQ(defaults->request.truncation_side, engine::TruncationSide::kRight);
  EXPECT_EQ(ParseCohereEmbed(R"({"texts": ["a"], "truncate": "NONE"})")->request.truncate, false);

  for (const char* bad : {R"({"texts": []})", R"({"texts": "a"})", R"({})",
                          R"({"texts": ["a"], "embedding_types": ["int4"]})",
                          R"({"texts": ["a"], "truncate": "MIDDLE"})",
                          R"({"texts": ["a"], "input_type": "image"})"}) {
    EXPECT_EQ(ParseCohereEmbed(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(CohereEmbedTest, InputTypeSelectsTheModelsPromptOfThatRole) {
  const std::map<std::string, std::string> prompts = {{"query", "query: "},
                                                      {"document", "passage: "}};
  EXPECT_EQ(PromptOfInputType("search_query", prompts), "query");
  EXPECT_EQ(PromptOfInputType("search_document", prompts), "document");
  EXPECT_EQ(PromptOfInputType("clustering", prompts), "");
  EXPECT_EQ(PromptOfInputType("", prompts), "");
  EXPECT_EQ(PromptOfInputType("search_query", {}), "");
  EXPECT_EQ(PromptOfInputType("classification", {{"classification", "c: "}}), "classification");
}

}  // namespace
}  // namespace server::http
