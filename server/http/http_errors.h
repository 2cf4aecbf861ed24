// How the service's errors reach HTTP clients: the status code, and the body
// each API's clients parse. OpenAI routes (/v1/...) answer
// {"error": {"message", "type", "code"}}; text-embeddings-inference routes
// answer {"error", "error_type"} (TEI's router/src/http/server.rs).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace server::http {

enum class Api { kOpenAi, kTei };

// A bad request's status differs by API: OpenAI answers 400, TEI 422.
// RESOURCE_EXHAUSTED 429 (with Retry-After), UNAVAILABLE 503,
// DEADLINE_EXCEEDED 504, UNAUTHENTICATED 401, CANCELLED 499, else 500.
int HttpStatusFor(absl::StatusCode code, Api api);

// The error body for `status` (not OK) as `api`'s clients expect it.
std::string ErrorBody(const absl::Status& status, int http_status, Api api);

// The reason phrase of an HTTP status ("Too Many Requests").
const char* ReasonPhrase(int http_status);

}  // namespace server::http
