#include "fuzz_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fuzz {
namespace {

std::string& TempDirPath() {
  static std::string path;
  return path;
}

void RemoveTempDir() {
  std::error_code ec;
  if (!TempDirPath().empty()) std::filesystem::remove_all(TempDirPath(), ec);
}

}  // namespace

const std::string& ProcessTempDir(const char* prefix) {
  std::string& path = TempDirPath();
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" +
                          prefix + "." + std::to_string(getpid()) + ".XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp failed");
    path = pattern;
    std::atexit(RemoveTempDir);
  }
  return path;
}

void WriteFileOrDie(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) Fail("cannot write a file in the fuzzing temp dir");
}

std::string SourcePath(const std::string& relative) {
  const char* env = std::getenv("ENCODER_SOURCE_DIR");
  const std::string root = env != nullptr && *env != '\0' ? env : FUZZ_SOURCE_DIR;
  return root + "/" + relative;
}

}  // namespace fuzz
