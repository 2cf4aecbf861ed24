// One-line log events on stderr: start, stop and errors. Nothing per request.
#pragma once

#include "absl/strings/string_view.h"

namespace server::core {

// Writes "<UTC time> encoder-server: <message>\n" in one write, so lines
// from different threads never interleave.
void LogEvent(absl::string_view message);
void LogError(absl::string_view message);  // the same, with "error: " before the message

}  // namespace server::core
