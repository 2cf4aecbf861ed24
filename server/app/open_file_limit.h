// The process's open-file limit against the connections it is asked to hold:
// every HTTP connection is a file descriptor, and Linux's default soft limit
// (1024) is far below --http-max-connections.
#pragma once

namespace server {

// Raises the soft RLIMIT_NOFILE to fit `connections` plus the server's own
// descriptors, up to the hard limit; logs what it did, and a warning when the
// hard limit is lower (connections past it wait in the listen backlog).
void RaiseOpenFileLimit(int connections);

}  // namespace server
