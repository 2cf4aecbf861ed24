// The status codes the service answers with, and nothing else (absl's codes
// are gRPC's, number for number; the HTTP adapter maps them to HTTP statuses):
// OK                  success
// INVALID_ARGUMENT    a bad input; the message names the input and the reason
// FAILED_PRECONDITION text input to a model whose tokenizer could not be
//                     loaded (it serves token ids; the message says why)
// RESOURCE_EXHAUSTED  the queue is full; retry with backoff
// UNAVAILABLE         the server is shutting down; retry on another replica
// DEADLINE_EXCEEDED   the deadline passed while the request was queued
// CANCELLED           the client cancelled
// UNAUTHENTICATED     API keys are on and the call had no valid one
// NOT_FOUND           the request names a model the server does not serve
// INTERNAL            the engine failed on a valid request (a bug); any other
//                     code a component reports becomes INTERNAL, message kept
#pragma once

#include <array>

#include "absl/status/status.h"

namespace server::core {

inline constexpr std::array<absl::StatusCode, 10> kAnsweredCodes = {
    absl::StatusCode::kOk,
    absl::StatusCode::kInvalidArgument,
    absl::StatusCode::kFailedPrecondition,
    absl::StatusCode::kResourceExhausted,
    absl::StatusCode::kUnavailable,
    absl::StatusCode::kDeadlineExceeded,
    absl::StatusCode::kCancelled,
    absl::StatusCode::kUnauthenticated,
    absl::StatusCode::kNotFound,
    absl::StatusCode::kInternal};

// `code` when it is answered, else INTERNAL.
inline absl::StatusCode AnsweredCode(absl::StatusCode code) {
  for (absl::StatusCode answered : kAnsweredCodes) {
    if (code == answered) return code;
  }
  return absl::StatusCode::kInternal;
}

}  // namespace server::core
