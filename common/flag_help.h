// --help for the project's binaries. Abseil's own --help lists only flags
// defined in a file named after the program (ours live in main.cc, so it
// printed "No flags matched") and spells them with '_'; this prints every
// flag the binary's own sources define, spelled as the README spells them
// (--tls-cert), with its description and default. Header-only, like
// flag_names.h; the binary links absl::flags_reflection.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"

namespace common {

// True when the arguments (before a bare "--") ask for help: --help, -help,
// --helpfull, -h.
inline bool AsksForFlagHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "-h" || args[i].rfind("--help", 0) == 0 || args[i].rfind("-help", 0) == 0) {
      return true;
    }
  }
  return false;
}

// "tls_cert" -> "tls-cert".
inline std::string DashedFlagName(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// Prints `usage`, then every flag defined in a source file whose path
// contains `source_dir` (e.g. "server/"), sorted by name: "--name (default
// "...")" and its description on the next line. `extra` (may be empty) is
// called with each flag's Abseil name and returns a note to append (e.g. the
// environment variable that also sets it).
template <typename Extra>
void PrintFlagHelp(std::ostream& out, const std::string& usage, const std::string& source_dir,
                   Extra extra) {
  out << usage;
  if (!usage.empty() && usage.back() != '\n') out << "\n";
  out << "\nflags:\n";
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename().find(source_dir) != std::string::npos) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  for (const absl::CommandLineFlag* flag : flags) {
    const std::string name(flag->Name());
    out << "  --" << DashedFlagName(name) << " (default \"" << flag->DefaultValue() << "\")";
    const std::string note = extra(name);
    if (!note.empty()) out << " [" << note << "]";
    out << "\n      " << flag->Help() << "\n";
  }
}

}  // namespace common
