#include "server/app/open_file_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "server/core/log.h"

namespace server {
namespace {

// Listening sockets, model files, gRPC's and the metrics port's connections.
constexpr rlim_t kOwnDescriptors = 1024;

}  // namespace

void RaiseOpenFileLimit(int connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = static_cast<rlim_t>(connections) + kOwnDescriptors;
  if (limit.rlim_cur >= wanted) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  if (limit.rlim_cur > before && setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    core::LogEvent(absl::StrCat("open-file limit raised from ", before, " to ", limit.rlim_cur,
                                " for --http-max-connections ", connections));
  } else {
    limit.rlim_cur = before;
  }
  if (limit.rlim_cur < wanted) {
    core::LogEvent(absl::StrCat("warning: the open-file limit (", limit.rlim_cur, ", hard limit ",
                                limit.rlim_max, ") holds fewer than --http-max-connections ",
                                connections,
                                " connections; past it new connections wait until others "
                                "close (raise it with ulimit -n or the container's nofile limit)"));
  }
}

}  // namespace server
