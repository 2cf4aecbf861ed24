// The model's served name (DefaultModelName, a pure function of the path)
// and LoadModel on real directories: a Hugging Face cache laid out as
// huggingface_hub lays it out (snapshot files are symlinks into blobs/),
// --served-model-name, and the files whose faults stop the load.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "engine/tools/random_model.h"
#include "server/core/model/model_loader.h"
#include "server/core/model/model_name.h"
#include "server/core/model/quantization_ranges.h"
#include "support/files.h"

namespace server {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;
using testing_support::WriteFile;

constexpr char kHub[] = "/root/.cache/huggingface/hub";
constexpr char kCommit[] = "5617a9f61b028005a4858fdac845db406aefb181";

TEST(DefaultModelNameTest, AHubCacheSnapshotServesUnderItsRepoId) {
  const std::string snapshot = std::string(kHub) + "/models--BAAI--bge-m3/snapshots/" + kCommit;
  EXPECT_EQ(core::DefaultModelName(snapshot, "/"), "BAAI/bge-m3");
  EXPECT_EQ(core::DefaultModelName(snapshot + "/", "/"), "BAAI/bge-m3");
  // The cache folder itself (its refs/main snapshot is loaded).
  EXPECT_EQ(core::DefaultModelName(std::string(kHub) + "/models--BAAI--bge-m3", "/"),
            "BAAI/bge-m3");
  EXPECT_EQ(core::DefaultModelName(std::string(kHub) + "/models--BAAI--bge-m3/", "/"),
            "BAAI/bge-m3");
  // Only the "--" between namespace and name is a separator ('-' stays).
  EXPECT_EQ(core::DefaultModelName(std::string(kHub) +
                                       "/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/"
                                       "8b3219a92973c328a8e22fadcfa821b5dc75636a",
                                   "/"),
            "sentence-transformers/all-MiniLM-L6-v2");
  // A repo without a namespace.
  EXPECT_EQ(
      core::DefaultModelName("/hub/models--bert-base-uncased/snapshots/86b5e0934494bd15", "/"),
      "bert-base-uncased");
}

TEST(DefaultModelNameTest, APlainDirectoryServesUnderItsLastComponent) {
  EXPECT_EQ(core::DefaultModelName("/home/me/models/bge-small-en-v1.5", "/"), "bge-small-en-v1.5");
  EXPECT_EQ(core::DefaultModelName("/home/me/models/bge-small-en-v1.5/", "/"), "bge-small-en-v1.5");
  EXPECT_EQ(core::DefaultModelName("/home/me/models/bge-small-en-v1.5//", "/"),
            "bge-small-en-v1.5");
  EXPECT_EQ(core::DefaultModelName("/models/model", "/"), "model");  // the container's mount
  // A name with "--" that no repo id gives, and a copy of a snapshot.
  EXPECT_EQ(core::DefaultModelName("/m/models--a--b--c", "/"), "models--a--b--c");
  EXPECT_EQ(core::DefaultModelName("/backup/snapshots/" + std::string(kCommit), "/"), kCommit);
}

TEST(DefaultModelNameTest, RelativePathsAreTakenFromTheWorkingDirectory) {
  EXPECT_EQ(core::DefaultModelName(".", "/srv/models/minilm"), "minilm");
  EXPECT_EQ(core::DefaultModelName("./", "/srv/models/minilm"), "minilm");
  EXPECT_EQ(
      core::DefaultModelName(".", std::string(kHub) + "/models--BAAI--bge-m3/snapshots/" + kCommit),
      "BAAI/bge-m3");
  EXPECT_EQ(core::DefaultModelName("models/minilm", "/srv"), "minilm");
  EXPECT_EQ(core::DefaultModelName("../minilm", "/srv/models/bge"), "minilm");
  EXPECT_EQ(core::DefaultModelName("snapshots/abc", std::string(kHub) + "/models--BAAI--bge-m3"),
            "BAAI/bge-m3");
}

engine::EncoderOptions Options() {
  engine::EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 256;
  return options;
}

// The hub cache after a download of BAAI/bge-m3: each file a blob, the
// snapshot's files relative symlinks to them, refs/main naming the commit.
class HubCacheModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path written = fs::path(temp_.path()) / "written";
    ASSERT_TRUE(engine::WriteRandomModel(written.string(), engine::TinyModelSpec()).ok());
    folder_ = fs::path(temp_.path()) / "hub" / "models--BAAI--bge-m3";
    fs::create_directories(folder_ / "blobs");
    fs::create_directories(Snapshot());
    fs::create_directories(folder_ / "refs");
    int blob = 0;
    for (const auto& file : fs::directory_iterator(written)) {
      const std::string name = "blob" + std::to_string(blob++);
      fs::rename(file.path(), folder_ / "blobs" / name);
      fs::create_symlink("../../blobs/" + name, Snapshot() / file.path().filename());
    }
    WriteFile((folder_ / "refs" / "main").string(), kCommit);
  }
  fs::path Snapshot() const { return folder_ / "snapshots" / kCommit; }

  TempDir temp_{"hub_cache_model_"};
  fs::path folder_;
};

TEST_F(HubCacheModelTest, ASnapshotLoadsThroughItsSymlinksUnderTheRepoId) {
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(Snapshot().string(), Options());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->name, "BAAI/bge-m3");
  EXPECT_EQ(model->directory, Snapshot().string());
  ASSERT_NE(model->tokenizer, nullptr) << model->tokenizer_error;
  EXPECT_EQ(model->tokenizer->source(),
            Snapshot().string() + "/vocab.txt + " + Snapshot().string() + "/tokenizer_config.json");
}

TEST_F(HubCacheModelTest, TheCacheFolderLoadsTheSnapshotOfRefsMain) {
  // Another, older snapshot that refs/main does not name.
  fs::create_directories(folder_ / "snapshots" / "0000");
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(folder_.string(), Options());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->name, "BAAI/bge-m3");
  EXPECT_EQ(model->directory, Snapshot().string());
}

TEST_F(HubCacheModelTest, ASymlinkToASnapshotServesUnderItsOwnName) {
  const fs::path link = fs::path(temp_.path()) / "bge";
  fs::create_directory_symlink(Snapshot(), link);
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(link.string(), Options());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->name, "bge");
}

TEST_F(HubCacheModelTest, ServedModelNameWins) {
  absl::StatusOr<core::LoadedModel> model =
      core::LoadModel(folder_.string(), Options(), "bge-m3-prod");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->name, "bge-m3-prod");
}

TEST_F(HubCacheModelTest, AMissingBlobOfTheTokenizerStopsTheLoad) {
  ASSERT_TRUE(
      fs::remove(folder_ / "blobs" / fs::read_symlink(Snapshot() / "vocab.txt").filename()));
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(Snapshot().string(), Options());
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(model.status().message(),
                                Snapshot().string() +
                                    "/vocab.txt: cannot open: No such file or directory (a "
                                    "symlink to ../../blobs/"))
      << model.status();
}

class ModelDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(engine::WriteRandomModel(dir_, engine::TinyModelSpec()).ok());
  }
  absl::Status Load() { return core::LoadModel(dir_, Options()).status(); }

  TempDir temp_{"model_files_"};
  const std::string dir_ = temp_.path() + "/minilm";
};

TEST_F(ModelDirectoryTest, WithoutATokenizerTheModelServesTokenIds) {
  fs::remove(dir_ + "/vocab.txt");
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(dir_, Options());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->name, "minilm");
  EXPECT_EQ(model->tokenizer, nullptr);
  EXPECT_EQ(model->tokenizer_error, dir_ + ": has neither tokenizer.json nor vocab.txt");
}

TEST_F(ModelDirectoryTest, ATokenizerFileThatCannotBeReadStopsTheLoad) {
  fs::remove(dir_ + "/vocab.txt");
  fs::create_directory(dir_ + "/vocab.txt");
  EXPECT_EQ(Load(),
            absl::FailedPreconditionError(dir_ + "/vocab.txt: cannot read: Is a directory"));
}

TEST_F(ModelDirectoryTest, APoolingConfigThatCannotBeReadStopsTheLoad) {
  // Not read as "no file, so CLS": the model would pool differently.
  fs::create_directories(dir_ + "/1_Pooling/config.json");
  EXPECT_EQ(Load(), absl::FailedPreconditionError(
                        dir_ + "/1_Pooling/config.json: cannot read: Is a directory"));
  fs::remove(dir_ + "/1_Pooling/config.json");
  WriteFile(dir_ + "/1_Pooling/config.json",
            "{\n  \"word_embedding_dimension\": 32,\n  \"pooling_mode_cls_token\": false,\n"
            "  \"pooling_mode_mean_tokens\": true,\n}\n");
  const absl::Status status = Load();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(
      status.message(), dir_ + "/1_Pooling/config.json: not valid JSON at line 5, column 1: "))
      << status;
}

TEST_F(ModelDirectoryTest, TheShippedQuantizationRangesAreReadWithTheModel) {
  absl::StatusOr<core::LoadedModel> none = core::LoadModel(dir_, Options());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->shipped_quantization_ranges, nullptr);
  std::string minimum, maximum;
  for (int i = 0; i < 32; ++i) {
    minimum += i == 0 ? "-1" : ", -1";
    maximum += i == 0 ? "1" : ", 1";
  }
  WriteFile(dir_ + "/quantization_ranges.json",
            "{\"ranges\": [[" + minimum + "], [" + maximum + "]]}");
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(dir_, Options());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_NE(model->shipped_quantization_ranges, nullptr);
  EXPECT_EQ(model->shipped_quantization_ranges->size(), 32);
  EXPECT_EQ(model->shipped_quantization_ranges_source, dir_ + "/quantization_ranges.json");
  // A flag's file wins; the shipped one is checked against the embedding.
  absl::StatusOr<std::shared_ptr<const core::QuantizationRanges>> chosen =
      core::ChooseQuantizationRanges("", model->shipped_quantization_ranges,
                                     model->shipped_quantization_ranges_source, 16);
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.status().message().find(dir_ + "/quantization_ranges.json: 32 dimensions"),
            std::string::npos)
      << chosen.status();
}

TEST_F(ModelDirectoryTest, AConfigKeyTheEngineDoesNotRunStopsTheLoad) {
  // BertModel with is_decoder attends causally: not served bidirectional.
  std::string config = testing_support::ReadFile(dir_ + "/config.json");
  config.insert(config.find('{') + 1, "\n  \"is_decoder\": true,");
  WriteFile(dir_ + "/config.json", config);
  EXPECT_EQ(Load(), absl::InvalidArgumentError(
                        dir_ + "/config.json: unsupported is_decoder true (supported: false)"));
}

}  // namespace
}  // namespace server
