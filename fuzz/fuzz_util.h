// Helpers shared by the libFuzzer targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fuzz {

// A directory of this process's own under $TMPDIR (or /tmp), removed at exit,
// so that parallel fuzzing jobs (-jobs, -workers) never share files.
const std::string& ProcessTempDir(const char* prefix);

// Writes `bytes` to `path`, replacing it; aborts on failure (a broken fuzzing
// setup, not a finding).
void WriteFileOrDie(const std::string& path, std::string_view bytes);

// An invariant of the code under test does not hold: report and crash, so
// that libFuzzer saves the input.
[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

inline void Check(bool condition, const char* what) {
  if (!condition) Fail(what);
}

// A path given at build time (FUZZ_SOURCE_DIR) or overridden by $ENCODER_SOURCE_DIR.
std::string SourcePath(const std::string& relative);

}  // namespace fuzz
