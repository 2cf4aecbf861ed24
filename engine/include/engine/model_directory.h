// The files of one model directory, each read at most once: its folders are
// listed once, a file's text is read once and a JSON file parsed once, and
// every part of the loader (config, weights, tokenizer, sentence-transformers
// pipeline, heads, calibration) asks this object instead of the file system.
// The reads go through a ModelFileReader, which tests replace to count them.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace engine {

// One name in a listed folder. A dangling symlink (a Hugging Face cache
// snapshot whose blob was never downloaded) is listed as a file: opening it
// then fails naming where it points, rather than the file silently not
// counting.
struct DirectoryEntry {
  std::string name;
  bool is_directory = false;
};

// How the loader reaches the file system. The default (FileSystemReader)
// reads it; a test wraps it to count or refuse opens.
class ModelFileReader {
 public:
  virtual ~ModelFileReader() = default;
  // The names in folder `path` ("." and ".." left out).
  virtual absl::StatusOr<std::vector<DirectoryEntry>> List(const std::string& path) const;
  // The whole file (engine/model_files.h's ReadModelFile).
  virtual absl::StatusOr<std::string> Read(const std::string& path) const;
  // Said before a file is memory-mapped rather than read (the safetensors
  // weights, which the engine maps itself).
  virtual void WillMap(const std::string& path) const;
};

// The process's file-system reader.
const ModelFileReader& FileSystemReader();

class ModelDirectory {
 public:
  // Lists `path` (NotFound or FailedPrecondition naming it when it is not a
  // directory). A directory that cannot be listed opens with nothing listed
  // and listing_status() saying why: reading a file by name then names that
  // file's own fault (a directory of mode 000: config.json's "Permission
  // denied"). `reader` must outlive the object; null: the file system's.
  static absl::StatusOr<std::unique_ptr<ModelDirectory>> Open(
      const std::string& path, const ModelFileReader* reader = nullptr);
  ~ModelDirectory();
  ModelDirectory(const ModelDirectory&) = delete;
  ModelDirectory& operator=(const ModelDirectory&) = delete;

  const std::string& path() const { return path_; }
  const absl::Status& listing_status() const { return listing_status_; }
  // `name` (relative, "1_Pooling/config.json") under path(), for messages
  // and for the files the engine maps.
  std::string PathOf(const std::string& name) const;

  // Whether `name` is listed (anything: a file, a dangling symlink, or a
  // folder, which reading then refuses naming it, as the file system would),
  // or with HasFolder listed as a folder. A folder is listed on its first
  // question.
  bool Has(const std::string& name);
  bool HasFolder(const std::string& name);

  // The file's bytes, read on the first call and kept. Errors name the file.
  absl::StatusOr<const std::string*> Text(const std::string& name);
  // The file parsed as JSON on the first call and kept; errors name the file
  // (with the line and column of a syntax error).
  absl::StatusOr<const nlohmann::json*> Json(const std::string& name);
  // The same, or null (and OK) when the directory does not list `name`.
  absl::StatusOr<const nlohmann::json*> JsonIfPresent(const std::string& name);
  // Json, and InvalidArgument "PATH: not a JSON object" for any other value.
  absl::StatusOr<const nlohmann::json*> JsonObject(const std::string& name);
  absl::StatusOr<const nlohmann::json*> JsonObjectIfPresent(const std::string& name);

  // The full path of `name` for the caller to map, said to the reader once.
  std::string Map(const std::string& name);

 private:
  ModelDirectory(std::string path, const ModelFileReader* reader);
  // The listing of folder `folder` ("" the directory itself), listed once.
  const std::map<std::string, bool>& Listing(const std::string& folder);

  std::string path_;
  const ModelFileReader* reader_;
  std::map<std::string, std::map<std::string, bool>> listings_;  // name -> is a folder
  std::map<std::string, std::string> texts_;
  std::map<std::string, std::unique_ptr<nlohmann::json>> documents_;
  std::set<std::string> mapped_;
  absl::Status listing_status_;
};

}  // namespace engine
