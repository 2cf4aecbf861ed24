// Read-only view of a .safetensors file: the header is parsed and checked
// (dtypes, shapes, offsets inside the data section, no overlaps) and the
// data stays memory-mapped until the file object is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace engine {

enum class DType { kF32, kF16, kBF16, kI32, kI64 };

const char* DTypeName(DType dtype);
size_t DTypeSize(DType dtype);

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;

  int64_t num_elements() const;
};

class SafetensorsFile {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const TensorView* Find(const std::string& name) const;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

  // Tells the kernel the mapped pages of `view` are no longer needed, so a
  // loader that has copied a tensor does not hold it twice in memory.
  void Release(const TensorView& view) const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::map<std::string, TensorView> tensors_;
};

// Parses the bytes of a whole .safetensors file (8-byte header length, JSON
// header, data) and checks it as Open does; the views point into `bytes`.
// `path` names the file in errors. Open runs it on the file's mapping; the
// fuzz target fuzz_safetensors runs it on arbitrary bytes.
absl::StatusOr<std::map<std::string, TensorView>> ParseSafetensors(const uint8_t* bytes,
                                                                   uint64_t size,
                                                                   const std::string& path);

// Converts `view` (F32, F16 or BF16) to float32 into `out` (num_elements floats).
void ConvertToFloat(const TensorView& view, float* out);

// An IEEE half's bits as a float (exact: subnormals, infinities and NaNs too).
float HalfToFloat(uint16_t bits);
// Converts `view` (F32, F16 or BF16) to bf16 bits into `out` (num_elements):
// BF16 is copied as stored, F32 and F16 rounded to the nearest bf16 element
// by element (no float32 copy of the tensor is made).
void ConvertToBf16(const TensorView& view, uint16_t* out);

}  // namespace engine
