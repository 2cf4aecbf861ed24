#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/model_files.h"
#include "kernels/bf16.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

// A header bigger than this is not a model header but a corrupt length.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

absl::StatusOr<DType> ParseDType(const std::string& name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  if (name == "I32") return DType::kI32;
  if (name == "I64") return DType::kI64;
  return absl::InvalidArgumentError(absl::StrCat("unsupported dtype ", name));
}

absl::Status HeaderError(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

}  // namespace

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalize into a float
    exponent = 113;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kI32:
      return "I32";
    case DType::kI64:
      return "I64";
  }
  return "?";
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI64:
      return 8;
  }
  return 0;
}

int64_t TensorView::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

absl::StatusOr<std::map<std::string, TensorView>> ParseSafetensors(const uint8_t* bytes,
                                                                   uint64_t file_size,
                                                                   const std::string& path) {
  if (file_size < 8) {
    return HeaderError(path, absl::StrCat("truncated: ", file_size, " bytes, no header length"));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  if (header_size > kMaxHeaderBytes || header_size > file_size - 8) {
    return HeaderError(path, absl::StrCat("header length ", header_size,
                                          " runs past the end (file is ", file_size, " bytes)"));
  }
  const uint8_t* data = bytes + 8 + header_size;
  const uint64_t data_size = file_size - 8 - header_size;

  nlohmann::json header =
      nlohmann::json::parse(bytes + 8, data, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return HeaderError(path, "header is not a JSON object");
  }
  std::map<std::string, TensorView> tensors;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
      return HeaderError(path, absl::StrCat("tensor ", name, ": malformed header entry"));
    }
    absl::StatusOr<DType> dtype = ParseDType(entry["dtype"].get<std::string>());
    if (!dtype.ok()) {
      return HeaderError(path, absl::StrCat("tensor ", name, ": ", dtype.status().message()));
    }
    TensorView view;
    view.name = name;
    view.dtype = *dtype;
    // Every partial product must fit in int64_t: TensorView::num_elements()
    // multiplies the dimensions in that type (a zero dimension later does not
    // make an overflowing prefix harmless).
    constexpr uint64_t kMaxElements = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t elements = 1;
    for (const auto& dim : entry["shape"]) {
      if (!dim.is_number_unsigned()) {
        return HeaderError(path, absl::StrCat("tensor ", name, ": bad shape"));
      }
      const uint64_t d = dim.get<uint64_t>();
      if (d > kMaxElements || __builtin_mul_overflow(elements, d, &elements) ||
          elements > kMaxElements) {
        return HeaderError(path, absl::StrCat("tensor ", name, ": shape too large"));
      }
      view.shape.push_back(static_cast<int64_t>(d));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return HeaderError(path, absl::StrCat("tensor ", name, ": bad data_offsets"));
    }
    const uint64_t begin = offsets[0].get<uint64_t>();
    const uint64_t end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      return HeaderError(path, absl::StrCat("tensor ", name, ": data_offsets [", begin, ", ", end,
                                            ") run past the end of the data (", data_size,
                                            " bytes); the file may be truncated"));
    }
    uint64_t expected_bytes = 0;
    if (__builtin_mul_overflow(elements, DTypeSize(view.dtype), &expected_bytes) ||
        end - begin != expected_bytes) {
      return HeaderError(path, absl::StrCat("tensor ", name, ": ", end - begin, " bytes for ",
                                            elements, " elements of ", DTypeName(view.dtype)));
    }
    view.data = data + begin;
    view.nbytes = end - begin;
    ranges.emplace_back(begin, end);
    tensors.emplace(name, std::move(view));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      return HeaderError(path,
                         absl::StrCat("tensor data ranges overlap at byte ", ranges[i].first));
    }
  }
  return tensors;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return absl::DataLossError(absl::StrCat(path, ": cannot read: ", std::strerror(error)));
  }
  if (absl::Status status = CheckRegularFile(path, st); !status.ok()) {
    close(fd);
    return status;
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) {
    close(fd);
    return HeaderError(path, absl::StrCat("truncated: ", file_size, " bytes, no header length"));
  }
  void* mapping = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) {
    return absl::InternalError(absl::StrCat(path, ": mmap failed: ", std::strerror(errno)));
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->mapping_ = mapping;
  file->mapping_size_ = file_size;
  absl::StatusOr<std::map<std::string, TensorView>> tensors =
      ParseSafetensors(static_cast<const uint8_t*>(mapping), file_size, path);
  if (!tensors.ok()) return tensors.status();
  file->tensors_ = *std::move(tensors);
  return file;
}

const TensorView* SafetensorsFile::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void SafetensorsFile::Release(const TensorView& view) const {
  // madvise needs page-aligned ranges: release only the pages wholly inside the tensor.
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(view.data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(view.data) + view.nbytes) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void ConvertToFloat(const TensorView& view, float* out) {
  const int64_t n = view.num_elements();
  // A zero-size tensor may come with null pointers (an empty vector's data()),
  // and memcpy with a null pointer is undefined even for 0 bytes.
  if (n == 0) return;
  switch (view.dtype) {
    case DType::kF32:
      std::memcpy(out, view.data, static_cast<size_t>(n) * sizeof(float));
      break;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, view.data + 2 * i, 2);
        out[i] = HalfToFloat(h);
      }
      break;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, view.data + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(&out[i], &bits, sizeof(float));
      }
      break;
    case DType::kI32:
    case DType::kI64:
      break;  // callers check for float dtypes first
  }
}

void ConvertToBf16(const TensorView& view, uint16_t* out) {
  const int64_t n = view.num_elements();
  if (n == 0) return;
  switch (view.dtype) {
    case DType::kBF16:
      std::memcpy(out, view.data, static_cast<size_t>(n) * sizeof(uint16_t));
      break;
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, view.data + 4 * i, sizeof(f));
        out[i] = kernels::FloatToBf16(f);
      }
      break;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, view.data + 2 * i, 2);
        out[i] = kernels::FloatToBf16(HalfToFloat(h));
      }
      break;
    case DType::kI32:
    case DType::kI64:
      break;  // callers check for float dtypes first
  }
}

}  // namespace engine
