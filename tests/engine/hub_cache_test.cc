// The Hugging Face hub cache: folder names back to repo ids (the inverse of
// huggingface_hub's repo_folder_name), the repo id a model path shows, and
// refs/main to its snapshot, on cache layouts built as huggingface_hub
// builds them (snapshot files are symlinks into blobs/).
#include "engine/hub_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "support/files.h"

namespace engine {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;

// huggingface_hub's repo_folder_name for a model, written out here from its
// source: "models" and the repo id's parts joined by "--".
std::string RepoFolderName(const std::string& repo_id) {
  return "models--" + absl::StrReplaceAll(repo_id, {{"/", "--"}});
}

TEST(HubCacheTest, CacheFolderNamesInvertRepoFolderName) {
  for (const std::string repo :
       {"BAAI/bge-m3", "sentence-transformers/all-MiniLM-L6-v2", "intfloat/multilingual-e5-small",
        "bert-base-uncased", "gpt2", "user_1/a.b_c-d", "Org.Name/x"}) {
    EXPECT_EQ(RepoIdOfCacheFolder(RepoFolderName(repo)), repo) << RepoFolderName(repo);
  }
}

TEST(HubCacheTest, NamesThatNoRepoIdGivesAreNotCacheFolders) {
  for (const char* name : {
           "bge-m3",                 // a plain directory
           "models--",               // no repo id
           "models----bge",          // an empty namespace
           "models--BAAI--",         // an empty name
           "models--a--b--c",        // two '/' in a repo id
           "models--BAAI---bge",     // a name starting with '-'
           "models--BAAI---",        // ...or a namespace ending with one
           "models--BAAI--bge..m3",  // ".." is refused
           "models--BAAI--.bge",     // a name starting with '.'
           "models--BAAI--bge.git",  // ".git" at the end is refused
           "models--BAAI--bge m3",   // a space
           "datasets--BAAI--MLDR",   // a dataset, not a model
           "Models--BAAI--bge-m3",   // the prefix is lower case
       }) {
    EXPECT_EQ(RepoIdOfCacheFolder(name), std::nullopt) << name;
  }
  EXPECT_EQ(RepoIdOfCacheFolder("models--o--" + std::string(96, 'n')), "o/" + std::string(96, 'n'));
  EXPECT_EQ(RepoIdOfCacheFolder("models--o--" + std::string(97, 'n')), std::nullopt);
}

TEST(HubCacheTest, ModelPathsShowTheRepoIdOfASnapshotOrOfTheCacheFolder) {
  const std::string hub = "/root/.cache/huggingface/hub";
  const std::string commit = "5617a9f61b028005a4858fdac845db406aefb181";
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3/snapshots/" + commit), "BAAI/bge-m3");
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3/snapshots/" + commit + "/"),
            "BAAI/bge-m3");
  EXPECT_EQ(RepoIdOfModelPath(hub + "//models--BAAI--bge-m3/snapshots/" + commit + "//"),
            "BAAI/bge-m3");
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3"), "BAAI/bge-m3");
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3/"), "BAAI/bge-m3");
  EXPECT_EQ(RepoIdOfModelPath("models--sentence-transformers--all-MiniLM-L6-v2/snapshots/abc"),
            "sentence-transformers/all-MiniLM-L6-v2");
  EXPECT_EQ(RepoIdOfModelPath("/hub/models--gpt2/snapshots/abc"), "gpt2");

  EXPECT_EQ(RepoIdOfModelPath("/home/me/models/bge-small-en-v1.5"), std::nullopt);
  EXPECT_EQ(RepoIdOfModelPath("/models/model"), std::nullopt);
  // The snapshots folder is not a model; a "snapshots" elsewhere names nothing.
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3/snapshots"), std::nullopt);
  EXPECT_EQ(RepoIdOfModelPath("/data/backup/snapshots/abc"), std::nullopt);
  // A directory inside a snapshot is not the snapshot.
  EXPECT_EQ(RepoIdOfModelPath(hub + "/models--BAAI--bge-m3/snapshots/abc/1_Pooling"), std::nullopt);
  EXPECT_EQ(RepoIdOfModelPath(""), std::nullopt);
  EXPECT_EQ(RepoIdOfModelPath("/"), std::nullopt);
}

// A cache folder as huggingface_hub leaves it after a download of `commit`:
// blobs, the snapshot's files as relative symlinks to them, refs/main.
class HubCacheFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::path(cache_.path()) / "models--BAAI--bge-m3";
    fs::create_directories(folder_ / "blobs");
    fs::create_directories(folder_ / "refs");
    fs::create_directories(Snapshot());
    testing_support::WriteFile((folder_ / "blobs" / "0a1b").string(), "{}");
    fs::create_symlink("../../blobs/0a1b", Snapshot() / "config.json");
    testing_support::WriteFile((folder_ / "refs" / "main").string(), kCommit);
  }
  fs::path Snapshot() const { return folder_ / "snapshots" / kCommit; }

  static constexpr const char* kCommit = "5617a9f61b028005a4858fdac845db406aefb181";
  TempDir cache_;
  fs::path folder_;
};

TEST_F(HubCacheFolderTest, RefsMainPicksTheSnapshot) {
  absl::StatusOr<std::optional<std::string>> snapshot = MainSnapshotOfCacheFolder(folder_.string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(*snapshot, Snapshot().string());
  // With a trailing slash, and refs/main ending in a newline.
  testing_support::WriteFile((folder_ / "refs" / "main").string(), std::string(kCommit) + "\n");
  snapshot = MainSnapshotOfCacheFolder(folder_.string() + "/");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(*snapshot, Snapshot().string());
  EXPECT_TRUE(fs::is_symlink(fs::path(**snapshot) / "config.json"));
}

TEST_F(HubCacheFolderTest, OtherPathsAreNotResolved) {
  // A snapshot, a plain directory, and one named like a cache folder without
  // refs/ or snapshots/ inside.
  EXPECT_EQ(*MainSnapshotOfCacheFolder(Snapshot().string()), std::nullopt);
  EXPECT_EQ(*MainSnapshotOfCacheFolder(cache_.path()), std::nullopt);
  const fs::path lookalike = fs::path(cache_.path()) / "models--org--name";
  fs::create_directories(lookalike);
  EXPECT_EQ(*MainSnapshotOfCacheFolder(lookalike.string()), std::nullopt);
}

TEST_F(HubCacheFolderTest, AMissingRefNamesTheFileAndTheSnapshotsThereAre) {
  fs::remove(folder_ / "refs" / "main");
  absl::StatusOr<std::optional<std::string>> snapshot = MainSnapshotOfCacheFolder(folder_.string());
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(snapshot.status().message(),
            (folder_ / "refs" / "main").string() +
                ": cannot open: No such file or directory; pass its snapshot instead: " +
                Snapshot().string());
}

TEST_F(HubCacheFolderTest, ARefToASnapshotThatIsNotThereIsAnError) {
  testing_support::WriteFile((folder_ / "refs" / "main").string(), "ffff");
  absl::StatusOr<std::optional<std::string>> snapshot = MainSnapshotOfCacheFolder(folder_.string());
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), "refs/main names commit ffff but "))
      << snapshot.status();
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), "snapshots/ffff is missing"));

  testing_support::WriteFile((folder_ / "refs" / "main").string(), "../../etc");
  snapshot = MainSnapshotOfCacheFolder(folder_.string());
  ASSERT_FALSE(snapshot.ok());
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), "\"../../etc\" is not a commit"))
      << snapshot.status();
}

}  // namespace
}  // namespace engine
