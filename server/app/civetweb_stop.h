// Stopping a CivetWeb server (the metrics endpoint's: prometheus-cpp's exposer) without
// its 2 s waits. CivetWeb checks its stop flag only between polls of up to
// 2 s: its listening thread's, waiting for a connection, and a worker's,
// waiting for the next request on an idle keep-alive connection (the OpenAI
// client, a browser, any pooling HTTP client keeps one). mg_stop waits for
// both, so a stop took up to 2 s longer than its work.
#pragma once

#include <functional>
#include <string>

namespace server {

// Runs `stop` (which calls mg_stop, directly or through a destructor) on a
// thread of its own and, until it returns, every 10 ms: connects to
// host:port (a wildcard host: the loopback address; a name: each of its
// addresses), which wakes the listening thread, and ends reading on this
// process's accepted connections to `port` (shutdown(SHUT_RD)): an idle
// connection's poll returns and its worker closes it, while a response being
// written is still sent in full.
void StopCivetWebPromptly(const std::string& host, int port, const std::function<void()>& stop);

}  // namespace server
