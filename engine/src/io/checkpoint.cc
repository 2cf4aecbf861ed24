#include "io/checkpoint.h"

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "engine/hub_cache.h"
#include "engine/model_files.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

namespace fs = std::filesystem;

constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";

// The error for a directory without safetensors weights; when it has
// PyTorch's pickled weights instead, it names them and says how to get
// safetensors (the server does not unpickle: a pickle can run code).
absl::Status NoSafetensors(ModelDirectory& directory) {
  const std::string& model_dir = directory.path();
  const fs::path dir(model_dir);
  std::string pytorch;
  for (const char* name : {"pytorch_model.bin", "pytorch_model.bin.index.json"}) {
    if (directory.Has(name)) pytorch = name;
  }
  const std::string missing = absl::StrCat(model_dir, ": no ", kSingleFile, " or ", kIndexFile);
  if (pytorch.empty()) return absl::NotFoundError(missing);
  std::error_code error;
  const std::string absolute = fs::absolute(dir, error).lexically_normal().string();
  const std::optional<std::string> repo = RepoIdOfModelPath(absolute);
  // A cache snapshot is completed in the cache; any other directory in place.
  const std::string download =
      repo ? absl::StrCat("huggingface-cli download ", *repo, " --include '*.safetensors'")
           : absl::StrCat(
                 "huggingface-cli download ORG/NAME --include '*.safetensors' "
                 "--local-dir ",
                 model_dir);
  return absl::NotFoundError(absl::StrCat(
      missing, ", only ", pytorch,
      " (PyTorch's pickle format, not read); get safetensors weights with `", download,
      "` when the hub has them, or convert these: `python3 -c \"from transformers import "
      "AutoModel; AutoModel.from_pretrained('",
      model_dir, "').save_pretrained('", model_dir, "', safe_serialization=True)\"`"));
}

}  // namespace

std::string CanonicalTensorName(const std::string& name,
                                const std::vector<std::string>& task_prefixes) {
  std::string canonical = name;
  for (const std::string& prefix : task_prefixes) {
    if (absl::StartsWith(canonical, prefix)) {
      canonical = canonical.substr(prefix.size());
      break;
    }
  }
  if (absl::StrContains(canonical, "LayerNorm.")) {
    if (absl::EndsWith(canonical, ".gamma")) {
      canonical = canonical.substr(0, canonical.size() - 6) + ".weight";
    } else if (absl::EndsWith(canonical, ".beta")) {
      canonical = canonical.substr(0, canonical.size() - 5) + ".bias";
    }
  }
  return canonical;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::Status Checkpoint::AddFile(std::unique_ptr<SafetensorsFile> file) {
  for (const auto& [name, view] : file->tensors()) {
    for (const std::string& prefix : task_prefixes_) {
      if (absl::StartsWith(name, prefix)) prefixes_seen_.insert(prefix);
    }
    const std::string canonical = CanonicalTensorName(name, task_prefixes_);
    auto [it, inserted] = entries_.emplace(canonical, Entry{file.get(), &view});
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(file->path(), ": tensor ", name,
                                                     " also present in ", it->second.file->path()));
    }
  }
  file_names_.push_back(file->path());
  files_.push_back(std::move(file));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(
    const std::string& model_dir, const std::vector<std::string>& task_prefixes) {
  ASSIGN_OR_RETURN(std::unique_ptr<ModelDirectory> directory, ModelDirectory::Open(model_dir));
  return Open(*directory, task_prefixes);
}

absl::StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(
    ModelDirectory& directory, const std::vector<std::string>& task_prefixes) {
  std::unique_ptr<Checkpoint> checkpoint(new Checkpoint());
  checkpoint->model_dir_ = directory.path();
  checkpoint->task_prefixes_ = task_prefixes;
  if (directory.Has(kSingleFile)) {
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::Open(directory.Map(kSingleFile));
    if (!file.ok()) return file.status();
    RETURN_IF_ERROR(checkpoint->AddFile(*std::move(file)));
    return checkpoint;
  }
  const std::string index_path = directory.PathOf(kIndexFile);
  if (!directory.Has(kIndexFile)) return NoSafetensors(directory);
  ASSIGN_OR_RETURN(const nlohmann::json* parsed, directory.Json(kIndexFile));
  const nlohmann::json& index = *parsed;
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(index_path, ": no \"weight_map\" object"));
  }
  std::set<std::string> shard_names;
  for (const auto& [tensor, shard] : index.at("weight_map").items()) {
    if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(index_path, ": tensor ", tensor, ": shard must be a file name"));
    }
    shard_names.insert(shard.get<std::string>());
  }
  for (const std::string& shard : shard_names) {
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::Open(directory.Map(shard));
    if (!file.ok()) return file.status();
    RETURN_IF_ERROR(checkpoint->AddFile(*std::move(file)));
  }
  for (const auto& [tensor, shard] : index.at("weight_map").items()) {
    const auto it = checkpoint->entries_.find(CanonicalTensorName(tensor, task_prefixes));
    if (it == checkpoint->entries_.end() ||
        fs::path(it->second.file->path()).filename() != shard.get<std::string>()) {
      return absl::InvalidArgumentError(
          absl::StrCat(index_path, ": tensor ", tensor, " is not in ", shard.get<std::string>()));
    }
  }
  return checkpoint;
}

bool Checkpoint::SavedWithPrefix(const std::string& task_prefix) const {
  return prefixes_seen_.count(task_prefix) > 0;
}

bool Checkpoint::Has(const std::string& canonical_name) const {
  return entries_.count(canonical_name) > 0;
}

absl::Status Checkpoint::Check(const std::string& canonical_name,
                               const std::vector<int64_t>& expected_shape) const {
  const auto it = entries_.find(canonical_name);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(model_dir_, ": missing tensor ", canonical_name));
  }
  const TensorView& view = *it->second.view;
  const std::string where = absl::StrCat(it->second.file->path(), ": tensor ", view.name);
  if (view.dtype != DType::kF32 && view.dtype != DType::kF16 && view.dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": unsupported dtype ", DTypeName(view.dtype), " (supported: F32, F16, BF16)"));
  }
  if (view.shape != expected_shape) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": expected shape ",
                                                   ShapeString(expected_shape), ", got ",
                                                   ShapeString(view.shape)));
  }
  return absl::OkStatus();
}

absl::Status Checkpoint::ReadFloat(const std::string& canonical_name,
                                   const std::vector<int64_t>& expected_shape, float* out) const {
  RETURN_IF_ERROR(Check(canonical_name, expected_shape));
  const Entry& entry = entries_.at(canonical_name);
  ConvertToFloat(*entry.view, out);
  entry.file->Release(*entry.view);
  return absl::OkStatus();
}

absl::Status Checkpoint::ReadFloatRow(const std::string& canonical_name,
                                      const std::vector<int64_t>& expected_shape, int64_t row,
                                      float* out) const {
  RETURN_IF_ERROR(Check(canonical_name, expected_shape));
  if (expected_shape.size() != 2 || row < 0 || row >= expected_shape[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat(canonical_name, ": no row ", row, " in ", ShapeString(expected_shape)));
  }
  const TensorView& view = *entries_.at(canonical_name).view;
  const size_t row_bytes = view.nbytes / static_cast<size_t>(expected_shape[0]);
  TensorView one = view;
  one.shape = {expected_shape[1]};
  one.data = view.data + static_cast<size_t>(row) * row_bytes;
  one.nbytes = row_bytes;
  ConvertToFloat(one, out);
  return absl::OkStatus();
}

absl::Status Checkpoint::ReadBf16(const std::string& canonical_name,
                                  const std::vector<int64_t>& expected_shape, uint16_t* out) const {
  RETURN_IF_ERROR(Check(canonical_name, expected_shape));
  const Entry& entry = entries_.at(canonical_name);
  ConvertToBf16(*entry.view, out);
  entry.file->Release(*entry.view);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> Checkpoint::ReadFloat(
    const std::string& canonical_name, const std::vector<int64_t>& expected_shape) const {
  // Check first: the shape comes from config.json, and a config that claims
  // a huge vocabulary or hidden size must get an error, not a huge allocation.
  // After the check the size is the tensor's, which the file really holds.
  RETURN_IF_ERROR(Check(canonical_name, expected_shape));
  const Entry& entry = entries_.at(canonical_name);
  std::vector<float> values(static_cast<size_t>(entry.view->num_elements()));
  ConvertToFloat(*entry.view, values.data());
  entry.file->Release(*entry.view);
  return values;
}

}  // namespace engine
