#include "server/app/command_line.h"

#include <cctype>
#include <cstdlib>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"

namespace server {

std::string EnvironmentVariableFor(const std::string& flag_name) {
  std::string name = "ENCODER_";
  for (char c : flag_name) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

absl::Status ApplyEnvironmentOverrides(const std::vector<std::string>& flag_names) {
  for (const std::string& name : flag_names) {
    const std::string variable = EnvironmentVariableFor(name);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) return absl::InternalError(absl::StrCat("no flag --", name));
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(variable, "=\"", value, "\" is not a valid --", name, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace server
