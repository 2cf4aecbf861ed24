// The one model-directory loader (engine/model_contents.h) through a
// counting file layer: loading a model opens each file at most once (read
// or mapped), lists each folder once, and hands the server the tokenizer,
// the sentence-transformers pipeline and the shipped calibration it read.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model_contents.h"
#include "engine/model_directory.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

// Writes `file` in `folder`, creating the folder.
void WriteIn(const std::string& folder, const std::string& file, const std::string& text) {
  std::filesystem::create_directories(folder);
  testing_support::WriteFile(folder + "/" + file, text);
}

// Counts every listing, read and mapping the loader asks for.
class CountingReader : public ModelFileReader {
 public:
  absl::StatusOr<std::vector<DirectoryEntry>> List(const std::string& path) const override {
    ++lists[path];
    return ModelFileReader::List(path);
  }
  absl::StatusOr<std::string> Read(const std::string& path) const override {
    ++opens[path];
    return ModelFileReader::Read(path);
  }
  void WillMap(const std::string& path) const override { ++opens[path]; }

  mutable std::map<std::string, int> lists;
  mutable std::map<std::string, int> opens;  // reads and mappings
};

// Loads `dir` through a counting reader; every file opened and every folder
// listed at most once, and each of `expected` (relative names) opened.
void ExpectEachFileOnce(const std::string& dir, const std::vector<std::string>& expected) {
  SCOPED_TRACE(dir);
  CountingReader reader;
  absl::StatusOr<ModelContents> contents = LoadModelContents(dir, EncoderOptions{}, &reader);
  ASSERT_TRUE(contents.ok()) << contents.status();
  for (const auto& [path, count] : reader.opens) EXPECT_EQ(count, 1) << path << " opened";
  for (const auto& [path, count] : reader.lists) EXPECT_EQ(count, 1) << path << " listed";
  for (const std::string& name : expected) {
    EXPECT_EQ(reader.opens.count(dir + "/" + name), 1u) << name << " was not opened";
  }
}

std::string Golden(const std::string& path) { return std::string(GOLDEN_DIR) + "/" + path; }

TEST(ModelDirectoryTest, TheDemoModelOpensEachFileOnce) {
  const std::string dir = testing::WriteTinyModel("once_demo");
  ExpectEachFileOnce(dir,
                     {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"});
}

TEST(ModelDirectoryTest, ASentenceTransformersPipelineOpensEachFileOnce) {
  // modules.json, 1_Pooling, 2_Dense (its own safetensors), Normalize, prompts.
  ExpectEachFileOnce(
      Golden("pipelines/model"),
      {"config.json", "model.safetensors", "modules.json", "1_Pooling/config.json",
       "2_Dense/config.json", "2_Dense/model.safetensors", "config_sentence_transformers.json"});
}

TEST(ModelDirectoryTest, TheHeadsFilesAreOpenedOnce) {
  // bge-m3: the tokenizer serves the lexical weights and the server alike.
  ExpectEachFileOnce(Golden("multi_vector/bge_m3/model"),
                     {"config.json", "sparse_linear.pt", "colbert_linear.pt"});
  // PyLate's projection is the pipeline's, read once for both.
  ExpectEachFileOnce(Golden("multi_vector/colbert/model"), {"config.json", "modules.json"});
  // colbert-ir's HF_ColBERT: config.json's architectures, read once.
  ExpectEachFileOnce(Golden("multi_vector/colbertv2/model"), {"config.json", "artifact.metadata"});
  // A causal-LM reranker: the judgment tokens from the one tokenizer.
  ExpectEachFileOnce(Golden("heads/qwen3_reranker/model"), {"config.json"});
}

TEST(ModelDirectoryTest, TheShippedCalibrationIsReadWithTheModel) {
  const std::string dir = testing::WriteTinyModel("once_ranges");
  const nlohmann::json ranges = {
      {"ranges", {std::vector<float>(32, -1), std::vector<float>(32, 1)}}};
  testing_support::WriteFile(dir + "/quantization_ranges.json", ranges.dump());
  ExpectEachFileOnce(dir, {"quantization_ranges.json"});
  absl::StatusOr<ModelContents> contents = LoadModelContents(dir, EncoderOptions{});
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_TRUE(contents->calibration.has_value());
  EXPECT_EQ(contents->calibration->size(), 32);
  EXPECT_EQ(contents->calibration_source, dir + "/quantization_ranges.json");
  ASSERT_NE(contents->tokenizer, nullptr);
  EXPECT_EQ(contents->pipeline.pooling.front(), Pooling::kCls);
  testing_support::WriteFile(dir + "/quantization_ranges.json", R"({"ranges": [[0], [1, 2]]})");
  absl::StatusOr<ModelContents> bad = LoadModelContents(dir, EncoderOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(dir + "/quantization_ranges.json"), std::string::npos)
      << bad.status();
}

TEST(ModelDirectoryTest, ATokenizerThatFailsIsReportedNotFatal) {
  const std::string dir = testing::WriteTinyModel("once_bad_tokenizer");
  testing_support::WriteFile(dir + "/tokenizer.json", "{\"model\": {\"type\": \"Nonesuch\"}}");
  absl::StatusOr<ModelContents> contents = LoadModelContents(dir, EncoderOptions{});
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->tokenizer, nullptr);
  EXPECT_FALSE(contents->tokenizer_status.ok());
  EXPECT_TRUE(contents->tokenizer_file_listed);
}

TEST(ModelDirectoryTest, ListsOnceAndKnowsFilesFromFolders) {
  const std::string dir = testing::WriteTinyModel("once_listing");
  WriteIn(dir + "/1_Pooling", "config.json", R"({"pooling_mode_mean_tokens": true})");
  CountingReader reader;
  absl::StatusOr<std::unique_ptr<ModelDirectory>> directory = ModelDirectory::Open(dir, &reader);
  ASSERT_TRUE(directory.ok()) << directory.status();
  EXPECT_TRUE((*directory)->Has("config.json"));
  EXPECT_TRUE((*directory)->Has("1_Pooling"));  // listed; reading it is the error
  EXPECT_FALSE((*directory)->HasFolder("config.json"));
  EXPECT_TRUE((*directory)->HasFolder("1_Pooling"));
  EXPECT_TRUE((*directory)->Has("1_Pooling/config.json"));
  EXPECT_FALSE((*directory)->Has("2_Dense/config.json"));
  EXPECT_FALSE((*directory)->HasFolder("../" + dir));
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<const nlohmann::json*> json = (*directory)->Json("1_Pooling/config.json");
    ASSERT_TRUE(json.ok()) << json.status();
  }
  EXPECT_EQ(reader.opens[dir + "/1_Pooling/config.json"], 1);
  EXPECT_EQ(reader.lists[dir], 1);
  EXPECT_EQ(reader.lists[dir + "/1_Pooling"], 1);
  testing_support::WriteFile(dir + "/bad.json", "{\"a\": ");
  absl::StatusOr<const nlohmann::json*> bad = (*directory)->Json("bad.json");
  // Listed after Open: not in the listing, but read when asked by name.
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(dir + "/bad.json: not valid JSON at line 1"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace engine
