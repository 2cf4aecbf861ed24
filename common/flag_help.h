// --help for the project's binaries (encoder-server, encoder-client,
// encoder-cli). Abseil's own --help lists only flags defined in a file named
// after the program (ours live in main.cc, so it printed "No flags matched")
// and spells them with '_'; this prints every flag the binary's own sources
// define, spelled as the README spells them (--tls-cert), with its
// description and default. For a binary with commands, "<binary> COMMAND
// --help" lists only the flags of that command: a flag whose description
// starts with command names and a colon ("encode, bench: ...") belongs to
// those, any other to all. Header-only, like flag_names.h; the binary links
// absl::flags_reflection.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

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

// The first argument that is not a flag (before a bare "--"), when it is
// one of `commands`; else "".
inline std::string CommandNamedIn(const std::vector<std::string>& args,
                                  const std::vector<std::string>& commands) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (args[i].empty() || args[i][0] == '-') continue;
    return std::find(commands.begin(), commands.end(), args[i]) != commands.end() ? args[i] : "";
  }
  return "";
}

// Whether a flag described by `help` belongs to `command` (see the top of
// this file); every flag belongs to the empty command.
inline bool FlagBelongsToCommand(absl::string_view help, const std::string& command,
                                 const std::vector<std::string>& commands) {
  if (command.empty()) return true;
  const size_t colon = help.find(':');
  if (colon == absl::string_view::npos) return true;
  bool names_commands = true;
  bool names_this_one = false;
  for (absl::string_view name : absl::StrSplit(help.substr(0, colon), ", ")) {
    names_commands &= std::find(commands.begin(), commands.end(), name) != commands.end();
    names_this_one |= name == command;
  }
  return !names_commands || names_this_one;
}

// Prints `usage`, then every flag defined in a source file whose path
// contains `source_dir` (e.g. "server/"), sorted by name: "--name (default
// "...")" and its description on the next line. `extra` (may be empty) is
// called with each flag's Abseil name and returns a note to append (e.g. the
// environment variable that also sets it).
// With `command` (one of `commands`), only the flags that belong to it.
template <typename Extra>
void PrintFlagHelp(std::ostream& out, const std::string& usage, const std::string& source_dir,
                   Extra extra, const std::string& command = "",
                   const std::vector<std::string>& commands = {}) {
  out << usage;
  if (!usage.empty() && usage.back() != '\n') out << "\n";
  out << (command.empty() ? "\nflags:\n" : "\nflags of " + command + ":\n");
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename().find(source_dir) != std::string::npos &&
        FlagBelongsToCommand(flag->Help(), command, commands)) {
      flags.push_back(flag);
    }
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
