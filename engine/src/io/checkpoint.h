// The weights of a Hugging Face model directory: model.safetensors, or the
// shards listed by model.safetensors.index.json. Tensors are found by their
// canonical name: without the family's task prefix (TensorNames::
// task_prefixes in models/architecture.h), and with LayerNorm's legacy
// gamma/beta renamed weight/bias.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model_directory.h"
#include "io/safetensors.h"

namespace engine {

class Checkpoint {
 public:
  // The directory's weights, found in its listing, the index parsed once
  // and each file mapped once.
  static absl::StatusOr<std::unique_ptr<Checkpoint>> Open(
      ModelDirectory& directory, const std::vector<std::string>& task_prefixes);
  // The same for a directory not yet open (inspect, tests).
  static absl::StatusOr<std::unique_ptr<Checkpoint>> Open(
      const std::string& model_dir, const std::vector<std::string>& task_prefixes);

  bool Has(const std::string& canonical_name) const;
  // Whether some tensor's stored name began with `task_prefix` (one of
  // Open's): the checkpoint was saved from that task model ("model." of
  // Qwen3ForCausalLM).
  bool SavedWithPrefix(const std::string& task_prefix) const;

  // Whether the tensor exists with a float dtype (F32, F16, BF16) and shape
  // `expected_shape`; the error names the file and the tensor. Check before
  // allocating room for a tensor: `expected_shape` comes from config.json,
  // which may claim sizes that the file does not hold.
  absl::Status Check(const std::string& canonical_name,
                     const std::vector<int64_t>& expected_shape) const;

  // Converts the tensor to float32 into `out` after checking that its shape is
  // `expected_shape`, then lets the kernel drop its mapped pages so the
  // weights are not held twice. Errors name the file and the tensor.
  absl::Status ReadFloat(const std::string& canonical_name,
                         const std::vector<int64_t>& expected_shape, float* out) const;
  // The same into a new vector, allocated only once the tensor has passed Check.
  absl::StatusOr<std::vector<float>> ReadFloat(const std::string& canonical_name,
                                               const std::vector<int64_t>& expected_shape) const;

  // Row `row` of a 2-D tensor of `expected_shape` as float32 into `out`
  // (expected_shape[1] floats), without converting the rest (one row of a
  // [vocab, H] LM head).
  absl::Status ReadFloatRow(const std::string& canonical_name,
                            const std::vector<int64_t>& expected_shape, int64_t row,
                            float* out) const;

  // The tensor as bf16 bits into `out` (ConvertToBf16: a BF16 tensor keeps
  // its stored values), after the same checks as ReadFloat.
  absl::Status ReadBf16(const std::string& canonical_name,
                        const std::vector<int64_t>& expected_shape, uint16_t* out) const;

  struct Entry {
    const SafetensorsFile* file;
    const TensorView* view;
  };
  // Canonical name -> where the tensor is; for `inspect`.
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const std::vector<std::string>& files() const { return file_names_; }

 private:
  Checkpoint() = default;
  absl::Status AddFile(std::unique_ptr<SafetensorsFile> file);

  std::string model_dir_;
  std::vector<std::string> task_prefixes_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<std::string> file_names_;
  std::map<std::string, Entry> entries_;
  std::set<std::string> prefixes_seen_;
};

// "bert.encoder.layer.0.attention.output.LayerNorm.gamma" ->
// "encoder.layer.0.attention.output.LayerNorm.weight" with task prefixes
// {"bert."}: the first matching task prefix is dropped.
std::string CanonicalTensorName(const std::string& name,
                                const std::vector<std::string>& task_prefixes);

std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace engine
