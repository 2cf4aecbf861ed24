// The torch.save reader on arbitrary bytes. Byte 0 picks the framing:
//   even: the rest is a whole file (a zip archive holding <root>/data.pkl and
//         the storages <root>/data/<key>), which exercises the zip layer;
//   odd:  bytes 1-2 (little-endian) are a length L, the next L bytes are
//         data.pkl and the remainder a storage; the target zips them (as
//         archive/data.pkl, archive/data/0 and archive/data/1, stored) so the
//         pickle VM sees mutations the archive's CRCs would otherwise refuse.
// The pickle is never run: every opcode and global outside the whitelist
// must be an error naming the file, every accepted tensor hold exactly
// product(shape) floats of a known dtype, and no read may leave a storage
// (ASan watches the record copies).
#include <zip.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "io/torch_file.h"

namespace {

void Add(zip_t* archive, const char* name, const uint8_t* data, size_t size) {
  zip_source_t* source = zip_source_buffer(archive, data, size, 0);
  const zip_int64_t index = source ? zip_file_add(archive, name, source, ZIP_FL_OVERWRITE) : -1;
  if (index < 0) {
    zip_source_free(source);
    fuzz::Fail("zip_file_add");
  }
  zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
}

// A zip archive (in memory) of data.pkl and one storage, as torch lays it out.
std::string Zip(const uint8_t* pickle, size_t pickle_size, const uint8_t* storage,
                size_t storage_size) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* archive = buffer ? zip_open_from_source(buffer, ZIP_TRUNCATE, &error) : nullptr;
  if (archive == nullptr) fuzz::Fail("zip_open_from_source (write)");
  zip_source_keep(buffer);
  static const uint8_t kVersion[] = {'3', '\n'};
  Add(archive, "archive/data.pkl", pickle, pickle_size);
  Add(archive, "archive/data/0", storage, storage_size);
  Add(archive, "archive/data/1", storage, storage_size);
  Add(archive, "archive/version", kVersion, sizeof(kVersion));
  if (zip_close(archive) != 0) fuzz::Fail("zip_close");
  zip_stat_t stat;
  std::string bytes;
  if (zip_source_stat(buffer, &stat) != 0 || zip_source_open(buffer) != 0) {
    fuzz::Fail("zip_source_open");
  }
  bytes.resize(stat.size);
  if (zip_source_read(buffer, bytes.data(), stat.size) != static_cast<zip_int64_t>(stat.size)) {
    fuzz::Fail("zip_source_read");
  }
  zip_source_close(buffer);
  zip_source_free(buffer);
  zip_error_fini(&error);
  return bytes;
}

void CheckInvariants(const uint8_t* data, size_t size) {
  auto tensors = engine::ParseTorchFile(data, size, "fuzz.pt");
  if (!tensors.ok()) {
    fuzz::Check(tensors.status().message().rfind("fuzz.pt: ", 0) == 0, "errors name the file");
    return;
  }
  for (const auto& [name, tensor] : *tensors) {
    uint64_t elements = 1;
    for (int64_t d : tensor.shape) {
      fuzz::Check(d >= 0, "non-negative dimensions");
      elements *= static_cast<uint64_t>(d);
    }
    fuzz::Check(tensor.values.size() == elements, "values.size() == product(shape)");
    fuzz::Check(tensor.dtype == "float32" || tensor.dtype == "float16" ||
                    tensor.dtype == "bfloat16" || tensor.dtype == "float64",
                "a known dtype");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if ((data[0] & 1) == 0) {
    CheckInvariants(data + 1, size - 1);
    return 0;
  }
  if (size < 3) return 0;
  size_t pickle_size = data[1] | (static_cast<size_t>(data[2]) << 8);
  if (pickle_size > size - 3) pickle_size = size - 3;
  const uint8_t* pickle = data + 3;
  const std::string file = Zip(pickle, pickle_size, pickle + pickle_size, size - 3 - pickle_size);
  CheckInvariants(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  return 0;
}
