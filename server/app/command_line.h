// Command-line plumbing for encoder-server's main.cc (links Abseil flags;
// the server libraries do not).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/flag_names.h"

namespace server {

using common::NormalizeFlagNames;

// The environment-variable rule: flag --foo-bar (Abseil name foo_bar) takes
// ENCODER_FOO_BAR when that variable is set; a flag given on the command line
// wins over the variable. Applied before the command line is parsed, for the
// flags in `flag_names`. An unparsable value is an error naming the variable.
absl::Status ApplyEnvironmentOverrides(const std::vector<std::string>& flag_names);

// "ENCODER_" + the flag name upper-cased.
std::string EnvironmentVariableFor(const std::string& flag_name);

}  // namespace server
