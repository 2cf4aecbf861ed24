#include "engine/model_directory.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/model_files.h"
#include "nlohmann/json.hpp"

namespace engine {

absl::StatusOr<std::vector<DirectoryEntry>> ModelFileReader::List(const std::string& path) const {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return OpenError(path, errno);
  std::vector<DirectoryEntry> entries;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    // stat follows symlinks (a cache snapshot's entries are links to blobs);
    // one that leads nowhere is listed as a file.
    struct stat st;
    const bool is_directory = stat((path + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    entries.push_back({name, is_directory});
  }
  closedir(dir);
  return entries;
}

absl::StatusOr<std::string> ModelFileReader::Read(const std::string& path) const {
  return ReadModelFile(path);
}

void ModelFileReader::WillMap(const std::string&) const {}

const ModelFileReader& FileSystemReader() {
  static const ModelFileReader* const reader = new ModelFileReader();
  return *reader;
}

ModelDirectory::ModelDirectory(std::string path, const ModelFileReader* reader)
    : path_(std::move(path)), reader_(reader) {}
ModelDirectory::~ModelDirectory() = default;

absl::StatusOr<std::unique_ptr<ModelDirectory>> ModelDirectory::Open(
    const std::string& path, const ModelFileReader* reader) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return OpenError(path, errno);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a directory (a model is the directory of config.json, ",
                     "the weights and the tokenizer files)"));
  }
  std::unique_ptr<ModelDirectory> directory(
      new ModelDirectory(path, reader != nullptr ? reader : &FileSystemReader()));
  absl::StatusOr<std::vector<DirectoryEntry>> entries = directory->reader_->List(path);
  std::map<std::string, bool>& top = directory->listings_[""];
  if (!entries.ok()) {
    directory->listing_status_ = entries.status();
    return directory;
  }
  for (const DirectoryEntry& entry : *entries) top[entry.name] = entry.is_directory;
  return directory;
}

std::string ModelDirectory::PathOf(const std::string& name) const {
  return name.empty() ? path_ : absl::StrCat(path_, "/", name);
}

const std::map<std::string, bool>& ModelDirectory::Listing(const std::string& folder) {
  const auto found = listings_.find(folder);
  if (found != listings_.end()) return found->second;
  std::map<std::string, bool>& listing = listings_[folder];
  // A folder that cannot be listed lists nothing: its files are then
  // missing, and the error names them.
  const size_t slash = folder.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : folder.substr(0, slash);
  const std::string base = slash == std::string::npos ? folder : folder.substr(slash + 1);
  const std::map<std::string, bool>& above = Listing(parent);
  const auto entry = above.find(base);
  if (entry == above.end() || !entry->second) return listing;
  if (absl::StatusOr<std::vector<DirectoryEntry>> entries = reader_->List(PathOf(folder));
      entries.ok()) {
    for (const DirectoryEntry& e : *entries) listing[e.name] = e.is_directory;
  }
  return listing;
}

bool ModelDirectory::Has(const std::string& name) {
  const size_t slash = name.rfind('/');
  const std::map<std::string, bool>& listing =
      Listing(slash == std::string::npos ? "" : name.substr(0, slash));
  const auto found = listing.find(slash == std::string::npos ? name : name.substr(slash + 1));
  return found != listing.end();
}

bool ModelDirectory::HasFolder(const std::string& name) {
  if (name.empty()) return true;
  const size_t slash = name.rfind('/');
  const std::map<std::string, bool>& listing =
      Listing(slash == std::string::npos ? "" : name.substr(0, slash));
  const auto found = listing.find(slash == std::string::npos ? name : name.substr(slash + 1));
  return found != listing.end() && found->second;
}

absl::StatusOr<const std::string*> ModelDirectory::Text(const std::string& name) {
  if (const auto found = texts_.find(name); found != texts_.end()) return &found->second;
  ASSIGN_OR_RETURN(std::string text, reader_->Read(PathOf(name)));
  return &texts_.emplace(name, std::move(text)).first->second;
}

absl::StatusOr<const nlohmann::json*> ModelDirectory::Json(const std::string& name) {
  if (const auto found = documents_.find(name); found != documents_.end()) {
    return found->second.get();
  }
  ASSIGN_OR_RETURN(const std::string* text, Text(name));
  auto document = std::make_unique<nlohmann::json>();
  try {
    *document = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(name), ": ", DescribeJsonSyntaxError(*text, error.byte, error.what())));
  } catch (const nlohmann::json::exception& error) {  // a number out of range, ...
    return absl::InvalidArgumentError(
        absl::StrCat(PathOf(name), ": not valid JSON: ", error.what()));
  }
  return documents_.emplace(name, std::move(document)).first->second.get();
}

absl::StatusOr<const nlohmann::json*> ModelDirectory::JsonIfPresent(const std::string& name) {
  if (!Has(name)) return nullptr;
  return Json(name);
}

absl::StatusOr<const nlohmann::json*> ModelDirectory::JsonObject(const std::string& name) {
  ASSIGN_OR_RETURN(const nlohmann::json* document, Json(name));
  if (!document->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(PathOf(name), ": not a JSON object"));
  }
  return document;
}

absl::StatusOr<const nlohmann::json*> ModelDirectory::JsonObjectIfPresent(const std::string& name) {
  if (!Has(name)) return nullptr;
  return JsonObject(name);
}

std::string ModelDirectory::Map(const std::string& name) {
  const std::string path = PathOf(name);
  if (mapped_.insert(name).second) reader_->WillMap(path);
  return path;
}

}  // namespace engine
