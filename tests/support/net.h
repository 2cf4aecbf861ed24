// Loopback sockets for tests: a free port, a listener, a TCP connection.
#pragma once

namespace testing_support {

// A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's
// pick for port 0). Another process may take it before the caller binds it:
// for tests that only need a number no server of theirs uses. -1 on error.
int FreePort();

// A listening TCP socket on 127.0.0.1 at a port the kernel picks (set in
// *port); -1 (errno set) on error. The caller closes it.
int ListenLoopback(int* port);

// A connected TCP socket to 127.0.0.1:port whose reads time out after
// `read_timeout_seconds` (a test must not hang on a server that never
// answers); -1 (errno set) when the connection fails. The caller closes it.
int ConnectLoopback(int port, int read_timeout_seconds = 30);

}  // namespace testing_support
