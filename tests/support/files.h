// Scratch directories and whole-file reads and writes for tests.
#pragma once

#include <string>

namespace testing_support {

// A fresh empty directory under the test's temporary directory
// (::testing::TempDir(): $TEST_TMPDIR, else /tmp), named <prefix>XXXXXX;
// removed with its contents when this is destroyed. Throws std::runtime_error
// when the directory cannot be made.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "encoder_test_");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A TempDir that lives until the process exits (then it is removed): for
// helpers that hand out paths. Thread-safe.
std::string MakeTempDir(const std::string& prefix = "encoder_test_");

// The file's bytes; throws std::runtime_error naming the file when it cannot
// be read.
std::string ReadFile(const std::string& path);
// Replaces the file with `contents`; throws std::runtime_error naming the
// file when it cannot be written.
void WriteFile(const std::string& path, const std::string& contents);

}  // namespace testing_support
