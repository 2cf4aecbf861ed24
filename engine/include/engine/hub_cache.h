// The Hugging Face hub cache, as huggingface_hub lays it out (HF_HUB_CACHE,
// by default ~/.cache/huggingface/hub):
//   models--ORG--NAME/refs/main           the commit the branch main points to
//   models--ORG--NAME/snapshots/COMMIT/   that commit's files, symlinks into blobs/
//   models--ORG--NAME/blobs/              the files' contents
// A model can be served from a snapshot directory or from the repository's
// folder itself (then refs/main picks the snapshot, as huggingface_hub does).
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace engine {

// The repo id a cache folder's name stands for, inverting huggingface_hub's
// repo_folder_name ("models--" + the repo id with its '/' written "--"):
// "models--BAAI--bge-m3" -> "BAAI/bge-m3", "models--gpt2" -> "gpt2". A hub
// repo id has at most one '/', and its parts are made of letters, digits,
// '_', '-' and '.', neither starting nor ending with '-' or '.', with no
// "--" (huggingface_hub's validate_repo_id); a name that does not invert to
// such an id is not a cache folder: nullopt.
std::optional<std::string> RepoIdOfCacheFolder(absl::string_view folder_name);

// The repo id a model path shows, read from the path alone (no file system
// access): ".../models--ORG--NAME/snapshots/COMMIT" or ".../models--ORG--NAME"
// (trailing slashes ignored); nullopt for any other path. Relative paths
// ("." inside a snapshot) must be made absolute first.
std::optional<std::string> RepoIdOfModelPath(absl::string_view path);

// When `path` is a repository's cache folder (named models--ORG--NAME, with
// refs/ or snapshots/ inside): the snapshot directory refs/main names, as
// huggingface_hub resolves the revision "main" offline. nullopt for any
// other path. Errors name the file at fault: refs/main missing or unreadable
// (with the snapshots there are, to pass one of them instead), or naming a
// snapshot that is not there.
absl::StatusOr<std::optional<std::string>> MainSnapshotOfCacheFolder(const std::string& path);

}  // namespace engine
