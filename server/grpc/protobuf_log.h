#pragma once

namespace server {

// Sends libprotobuf's log lines through LogError, except its complaint about
// invalid UTF-8 while parsing: that is a client's bad request, answered
// INVALID_ARGUMENT, and the server logs nothing per request. Process-wide;
// call once at start.
void RouteProtobufLogs();

}  // namespace server
