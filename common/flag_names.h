// Command-line plumbing shared by the project's binaries (encoder-cli,
// encoder-server, encoder-client); header-only so no library depends on it.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace common {

// Abseil flag names cannot contain '-': rewrites --max-batch-tokens=... to
// --max_batch_tokens=... (only the name, never the value, and nothing after
// a bare "--" or in positional arguments).
inline std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args;
  args.reserve(static_cast<size_t>(argc));
  bool flags_ended = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") flags_ended = true;
    if (!flags_ended && i > 0 && arg.rfind("--", 0) == 0) {
      const size_t end = std::min(arg.find('='), arg.size());
      std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
    }
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace common
