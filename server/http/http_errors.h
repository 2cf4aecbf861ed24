// How the service's errors reach HTTP clients: the status code, and the body
// each API's clients parse. A route answers in the shape of the API family
// its line in the route table (routes.cc) declares: OpenAI's
// {"error": {"message", "type", "param", "code"}}; text-embeddings-inference's
// {"error", "error_type"} (TEI's router/src/lib.rs ErrorType: "Validation",
// "Tokenizer", "Empty", "Overloaded", "Unhealthy", "Backend"); Cohere's
// {"message"} (docs.cohere.com/reference/errors). docs/api.md lists every
// status, type and code.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace server::http {

// A route's API family. kNone: the server's own routes (/health, /metrics),
// which belong to no API; they, and errors before any route is known (a
// malformed request, a connection refused), answer in TEI's shape, as TEI's
// own /health does.
enum class Api { kNone, kOpenAi, kTei, kCohere };

// OpenAI's error codes this server answers with (OpenAI's own spelling).
inline constexpr char kInvalidValue[] = "invalid_value";
inline constexpr char kInvalidType[] = "invalid_type";
inline constexpr char kMissingParameter[] = "missing_required_parameter";
inline constexpr char kContextLengthExceeded[] = "context_length_exceeded";
inline constexpr char kModelNotFound[] = "model_not_found";
inline constexpr char kInvalidApiKey[] = "invalid_api_key";
inline constexpr char kRateLimitExceeded[] = "rate_limit_exceeded";

// `status` with what OpenAI's body says of it: "param", the field at fault
// ("input[3]", "dimensions"), and "code"; an empty one is null. Without
// this, ErrorBody derives them (from the core's InputError, else the status).
absl::Status WithOpenAiDetail(absl::Status status, absl::string_view param, absl::string_view code);

// INVALID_ARGUMENT about one field of the body.
absl::Status FieldError(absl::string_view param, absl::string_view code, absl::string_view message);

// An encode request's error as `api`'s route says it: an input too long for
// the model gets how to cut it on that route ("truncate": true; on OpenAI's
// also --auto-truncate; Cohere's "truncate": "END"), and on OpenAI the
// input's "param" ("input[3]" when the request held a list of inputs, else
// "input") and "code".
absl::Status ForEmbeddingsRoute(const absl::Status& status, Api api, bool input_is_list);

// The HTTP status of an error. A bad request is 400 on OpenAI's and
// Cohere's routes and 422 on TEI's, but 400 there for an empty input (TEI's
// "Empty"); a head the model lacks (rerank on an embedding model) 424 on
// TEI's and Cohere's (OpenAI has no such routes); then UNAUTHENTICATED 401,
// NOT_FOUND 404, RESOURCE_EXHAUSTED 429 (with Retry-After), CANCELLED 499,
// UNAVAILABLE 503, DEADLINE_EXCEEDED 504, else 500.
int HttpStatusFor(const absl::Status& status, Api api);
int HttpStatusFor(absl::StatusCode code, Api api);  // as above, for a status without payloads

// The error body for `status` (not OK), answered with `http_status`, as
// `api`'s clients expect it.
std::string ErrorBody(const absl::Status& status, int http_status, Api api);

// The reason phrase of an HTTP status ("Too Many Requests").
const char* ReasonPhrase(int http_status);

}  // namespace server::http
