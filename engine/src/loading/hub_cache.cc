#include "engine/hub_cache.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/model_files.h"

namespace engine {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kModelsPrefix = "models--";
constexpr absl::string_view kSeparator = "--";  // huggingface_hub's REPO_ID_SEPARATOR
constexpr size_t kMaxNameLength = 96;           // validate_repo_id's limit on the name

bool IsWordChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A namespace or repository name as validate_repo_id accepts it.
bool IsRepoIdPart(absl::string_view part) {
  if (part.empty() || !IsWordChar(part.front()) || !IsWordChar(part.back())) return false;
  for (char c : part) {
    if (!IsWordChar(c) && c != '-' && c != '.') return false;
  }
  return part.find("..") == absl::string_view::npos;
}

// The path's components, without empty ones (doubled or trailing slashes)
// and "." ones.
std::vector<absl::string_view> Components(absl::string_view path) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (!part.empty() && part != ".") parts.push_back(part);
  }
  return parts;
}

// "a, b" of the snapshot directories in `folder`, or a phrase saying there
// are none.
std::string SnapshotsIn(const fs::path& folder) {
  std::vector<std::string> snapshots;
  std::error_code error;
  for (fs::directory_iterator it(folder / "snapshots", error), end; !error && it != end;
       it.increment(error)) {
    snapshots.push_back(it->path().string());
  }
  if (snapshots.empty()) return "there are no snapshots either: download the model again";
  std::sort(snapshots.begin(), snapshots.end());
  if (snapshots.size() == 1) return "pass its snapshot instead: " + snapshots[0];
  return "pass one of its snapshots instead: " + absl::StrJoin(snapshots, ", ");
}

}  // namespace

std::optional<std::string> RepoIdOfCacheFolder(absl::string_view folder_name) {
  if (folder_name.substr(0, kModelsPrefix.size()) != kModelsPrefix) return std::nullopt;
  const absl::string_view repo = folder_name.substr(kModelsPrefix.size());
  const size_t separator = repo.find(kSeparator);
  const absl::string_view name =
      separator == absl::string_view::npos ? repo : repo.substr(separator + kSeparator.size());
  if (!IsRepoIdPart(name) || name.size() > kMaxNameLength ||
      name.find(kSeparator) != absl::string_view::npos ||
      (name.size() >= 4 && name.substr(name.size() - 4) == ".git")) {
    return std::nullopt;
  }
  if (separator == absl::string_view::npos) return std::string(name);
  const absl::string_view owner = repo.substr(0, separator);
  if (!IsRepoIdPart(owner)) return std::nullopt;
  return absl::StrCat(owner, "/", name);
}

std::optional<std::string> RepoIdOfModelPath(absl::string_view path) {
  const std::vector<absl::string_view> parts = Components(path);
  const size_t n = parts.size();
  if (n >= 3 && parts[n - 2] == "snapshots") {
    if (std::optional<std::string> repo = RepoIdOfCacheFolder(parts[n - 3])) return repo;
  }
  if (n >= 1) return RepoIdOfCacheFolder(parts[n - 1]);
  return std::nullopt;
}

absl::StatusOr<std::optional<std::string>> MainSnapshotOfCacheFolder(const std::string& path) {
  const fs::path folder = fs::path(path).lexically_normal();
  const std::vector<absl::string_view> parts = Components(path);
  if (parts.empty() || !RepoIdOfCacheFolder(parts.back())) return std::nullopt;
  std::error_code error;
  if (!fs::is_directory(folder / "refs", error) && !fs::is_directory(folder / "snapshots", error)) {
    return std::nullopt;  // a model directory that merely has such a name
  }
  const std::string ref_path = (folder / "refs" / "main").string();
  absl::StatusOr<std::string> ref = ReadModelFile(ref_path);
  if (!ref.ok()) {
    return absl::Status(ref.status().code(),
                        absl::StrCat(ref.status().message(), "; ", SnapshotsIn(folder)));
  }
  const std::string commit(absl::StripAsciiWhitespace(*ref));
  if (commit.empty() || commit.find('/') != std::string::npos || commit == "." || commit == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat(ref_path, ": \"", commit, "\" is not a commit; ", SnapshotsIn(folder)));
  }
  const fs::path snapshot = folder / "snapshots" / commit;
  if (!fs::is_directory(snapshot, error)) {
    return absl::NotFoundError(absl::StrCat(ref_path, " names commit ", commit, " but ",
                                            snapshot.string(), " is missing; ",
                                            SnapshotsIn(folder)));
  }
  return snapshot.string();
}

}  // namespace engine
