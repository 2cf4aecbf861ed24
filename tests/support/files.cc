#include "support/files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace testing_support {

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = ::testing::TempDir() + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + " failed");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string MakeTempDir(const std::string& prefix) {
  // Destroyed at exit, after main returns: each removes its directory.
  static std::mutex mu;
  static std::vector<std::unique_ptr<TempDir>> dirs;
  auto dir = std::make_unique<TempDir>(prefix);
  const std::string path = dir->path();
  std::lock_guard<std::mutex> lock(mu);
  dirs.push_back(std::move(dir));
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace testing_support
