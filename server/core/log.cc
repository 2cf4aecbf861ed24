#include "server/core/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "absl/strings/string_view.h"

namespace server::core {
namespace {

void WriteLine(absl::string_view prefix, absl::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char time_text[32];
  const size_t length = std::strftime(time_text, sizeof(time_text), "%Y-%m-%dT%H:%M:%S", &utc);
  char millis_text[8];
  std::snprintf(millis_text, sizeof(millis_text), ".%03dZ", static_cast<int>(millis));

  std::string line(time_text, length);
  line += millis_text;
  line += " encoder-server: ";
  line.append(prefix.data(), prefix.size());
  line.append(message.data(), message.size());
  line += '\n';
  // One write(2) per line: atomic for pipes and files at these sizes.
  const ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace

void LogEvent(absl::string_view message) { WriteLine("", message); }
void LogError(absl::string_view message) { WriteLine("error: ", message); }

}  // namespace server::core
