#include "io/safetensors_writer.h"

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace engine {

std::string SerializeSafetensors(const std::vector<NamedTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    const uint64_t bytes = t.values.size() * sizeof(float);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t header_size = header_text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header_size >> (8 * i)) & 0xff);
  out += header_text;
  out.reserve(out.size() + offset);
  for (const NamedTensor& t : tensors) {
    out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing"));
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!file) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors) {
  return WriteFile(path, SerializeSafetensors(tensors));
}

}  // namespace engine
