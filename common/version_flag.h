// --version for the project's binaries: "encoder-server 0.4.0+g1a2b3c4".
// Abseil's default prints the program name and, with Debian's Abseil (built
// without NDEBUG), "Debug build (NDEBUG not #defined)" even for a Release
// binary. Header-only like flag_help.h; the binary links absl::flags_usage
// and encoder_version.
#pragma once

#include <string>

#include "absl/flags/usage_config.h"
#include "common/version.h"

namespace common {

// Call before absl::ParseCommandLine, which handles --version.
inline void SetVersionFlagOutput(const char* program) {
  absl::FlagsUsageConfig config;
  config.version_string = [program] { return std::string(program) + " " + Version() + "\n"; };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace common
