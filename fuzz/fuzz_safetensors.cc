// The safetensors header parser on arbitrary bytes: the input is a whole
// .safetensors file (8-byte little-endian header length, JSON header, data).
// Every tensor the parser accepts must lie inside the input, have a size
// that matches its dtype and shape, and convert to float32 without reading
// outside its bytes (ASan watches the exactly-sized input buffer).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "families/architecture.h"
#include "fuzz_util.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensors = engine::ParseSafetensors(data, size, "fuzz.safetensors");
  if (!tensors.ok()) return 0;
  std::vector<float> floats;
  for (const auto& [name, view] : *tensors) {
    fuzz::Check(view.name == name, "view named after its key");
    fuzz::Check(view.data >= data && view.data + view.nbytes <= data + size,
                "tensor data inside the file");
    const int64_t elements = view.num_elements();
    fuzz::Check(elements >= 0, "non-negative element count");
    fuzz::Check(static_cast<uint64_t>(elements) * engine::DTypeSize(view.dtype) == view.nbytes,
                "byte size = elements x dtype size");
    for (const engine::Architecture& architecture : engine::Architectures()) {
      (void)engine::CanonicalTensorName(name, architecture.names.task_prefixes);
    }
    (void)engine::ShapeString(view.shape);
    if (view.dtype == engine::DType::kF32 || view.dtype == engine::DType::kF16 ||
        view.dtype == engine::DType::kBF16) {
      floats.resize(static_cast<size_t>(elements));
      engine::ConvertToFloat(view, floats.data());
    }
  }
  return 0;
}
