// The refusals every transport and request kind share, written once: the
// drain's UNAVAILABLE and the API-key check's UNAUTHENTICATED. The
// transports map the codes to their own (HTTP 503, 401).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace server::core {

// Every request after the drain began (SIGTERM, server/app).
inline absl::Status ShuttingDown() { return absl::UnavailableError("server is shutting down"); }

// A call without a key, or with one that is not among --api-key's;
// `how_to_send` in the transport's words ("the header Authorization: Bearer KEY").
inline absl::Status Unauthenticated(absl::string_view how_to_send) {
  return absl::UnauthenticatedError(absl::StrCat("a valid API key is needed: send ", how_to_send));
}

}  // namespace server::core
