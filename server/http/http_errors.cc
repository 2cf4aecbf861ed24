#include "server/http/http_errors.h"

#include <nlohmann/json.hpp>

namespace server::http {
namespace {

// TEI's ErrorType, snake_case as it serializes it.
const char* TeiErrorType(int http_status) {
  switch (http_status) {
    case 429:
      return "overloaded";
    case 503:
      return "unhealthy";
    case 400:
    case 413:
    case 422:
      return "validation";
    default:
      return "backend";
  }
}

const char* OpenAiErrorType(int http_status) {
  switch (http_status) {
    case 400:
    case 401:
    case 404:
    case 405:
    case 413:
      return "invalid_request_error";
    case 429:
      return "rate_limit_error";
    default:
      return "server_error";
  }
}

}  // namespace

int HttpStatusFor(absl::StatusCode code, Api api) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:  // text to a model without a tokenizer
      return api == Api::kOpenAi ? 400 : 422;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string ErrorBody(const absl::Status& status, int http_status, Api api) {
  nlohmann::json body;
  const std::string message(status.message());
  if (api == Api::kOpenAi) {
    body["error"] = {
        {"message", message},
        {"type", OpenAiErrorType(http_status)},
        {"code", http_status == 401 ? nlohmann::json("invalid_api_key")
                                    : nlohmann::json(absl::StatusCodeToString(status.code()))}};
  } else {
    body = {{"error", message}, {"error_type", TeiErrorType(http_status)}};
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* ReasonPhrase(int http_status) {
  switch (http_status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 499:
      return "Client Closed Request";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Internal Server Error";
  }
}

}  // namespace server::http
