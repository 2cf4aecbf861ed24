// Reading the files of a model directory (config.json, the weights and their
// index, the tokenizer files, sentence-transformers' configs) with errors a
// user can act on: the path and the OS's reason, and for JSON the line and
// column. Header-only: the engine, the tokenizer library and the server each
// read model files, and the tokenizer library does not link the engine.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace engine {

// "PATH: cannot open: <the OS's reason>" for `open` having failed with
// `error` (an errno): NotFound when the file or a directory on the way is
// missing, PermissionDenied when access is refused, else FailedPrecondition.
// A dangling symlink (a Hugging Face cache snapshot whose blob was never
// downloaded) says where it points.
inline absl::Status OpenError(const std::string& path, int error) {
  std::string reason = std::strerror(error);
  if (error == ENOENT) {
    char target[PATH_MAX];
    const ssize_t length = readlink(path.c_str(), target, sizeof(target) - 1);
    if (length > 0) {
      absl::StrAppend(&reason, " (a symlink to ",
                      absl::string_view(target, static_cast<size_t>(length)),
                      ", which is missing)");
    }
  }
  const std::string message = absl::StrCat(path, ": cannot open: ", reason);
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::FailedPreconditionError(message);
}

// FailedPrecondition "PATH: cannot read: Is a directory" (or "not a regular
// file") when `st` is not a regular file; OK when it is.
inline absl::Status CheckRegularFile(const std::string& path, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": cannot read: ", S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file"));
}

// The whole file. Errors name the path and say why (OpenError,
// CheckRegularFile; DataLoss "PATH: cannot read: <reason>" when reading fails).
inline absl::StatusOr<std::string> ReadModelFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(path, errno);
  struct stat st;
  absl::Status status =
      fstat(fd, &st) == 0
          ? CheckRegularFile(path, st)
          : absl::DataLossError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
  // One byte more than the size, to see the end in one pass; files whose
  // size stat does not know (procfs) grow the buffer.
  std::string content;
  if (status.ok()) content.resize(static_cast<size_t>(st.st_size) + 1);
  for (size_t done = 0; status.ok();) {
    if (done == content.size()) content.resize(std::max<size_t>(4096, 2 * content.size()));
    const ssize_t got = read(fd, content.data() + done, content.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status = absl::DataLossError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
    } else if (got == 0) {
      content.resize(done);
      break;
    } else {
      done += static_cast<size_t>(got);
    }
  }
  close(fd);
  if (!status.ok()) return status;
  return content;
}

// "line L, column C" of the byte at `offset` in `text`, both counted from 1
// (columns in bytes); an offset at or past the end is the position just
// after the last byte.
inline std::string LineAndColumn(absl::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const absl::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start =
      before.rfind('\n') == absl::string_view::npos ? 0 : before.rfind('\n') + 1;
  return absl::StrCat("line ", line, ", column ", offset - line_start + 1);
}

// nlohmann::json's parse_error as one clause: "not valid JSON at line L,
// column C: <what went wrong>". nlohmann gives `byte`, the characters read
// with the offending one (so it is at offset byte - 1), and `what`,
// "[json.exception.parse_error.101] parse error at ...: <what went wrong>";
// its own line and column count differently (a newline read ends the line
// before it), so they are recomputed.
inline std::string DescribeJsonSyntaxError(absl::string_view text, size_t byte,
                                           absl::string_view what) {
  const size_t column = what.find("column ");
  const size_t colon = what.find(": ", column == absl::string_view::npos ? 0 : column);
  if (colon != absl::string_view::npos) what.remove_prefix(colon + 2);
  return absl::StrCat("not valid JSON at ", LineAndColumn(text, byte > 0 ? byte - 1 : 0), ": ",
                      what);
}

}  // namespace engine
