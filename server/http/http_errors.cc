#include "server/http/http_errors.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"

namespace server::http {
namespace {

using core::FindInputError;
using core::InputError;
using core::InputProblem;

constexpr char kOpenAiDetailPayload[] = "encoder-service/openai-detail";

struct OpenAiDetail {
  std::string param;  // empty: null
  std::string code;   // empty: null
};

std::optional<OpenAiDetail> FindOpenAiDetail(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kOpenAiDetailPayload);
  if (!payload.has_value()) return std::nullopt;
  // "param\ncode": neither holds a newline.
  const std::pair<std::string, std::string> fields =
      absl::StrSplit(std::string(*payload), absl::MaxSplits('\n', 1));
  return OpenAiDetail{fields.first, fields.second};
}

bool IsEmptyInput(const absl::Status& status) {
  const std::optional<InputError> input = FindInputError(status);
  return input.has_value() && input->problem == InputProblem::kEmpty;
}

// TEI's ErrorType, spelled as TEI serializes it. TEI has no type for routing,
// keys or deadlines: a wrong path, method or key is the request's fault
// (Validation), a passed deadline is load (Overloaded).
const char* TeiErrorType(const absl::Status& status, int http_status) {
  if (http_status == 429 || http_status == 504) return "Overloaded";
  if (http_status == 503) return "Unhealthy";
  // 424: a head the model lacks, which TEI reports as a backend error.
  if (http_status >= 500 || http_status == 499 || http_status == 424) return "Backend";
  // Text to a model whose tokenizer could not be loaded.
  if (status.code() == absl::StatusCode::kFailedPrecondition) return "Tokenizer";
  if (IsEmptyInput(status)) return "Empty";
  return "Validation";
}

// OpenAI's "type": every client error is an invalid_request_error (401 and
// 404 too, as OpenAI answers them); a 429 is "tokens", as OpenAI's token-rate
// limits are (the queue's limit is in tokens).
const char* OpenAiErrorType(int http_status) {
  if (http_status == 429) return "tokens";
  if (http_status >= 400 && http_status < 500 && http_status != 499) {
    return "invalid_request_error";
  }
  return "server_error";
}

// "param" and "code" when the status does not carry them.
OpenAiDetail DeriveOpenAiDetail(const absl::Status& status, int http_status) {
  if (http_status == 401) return {"", std::string(kInvalidApiKey)};
  if (http_status == 429) return {"", std::string(kRateLimitExceeded)};
  if (http_status != 400) return {};
  if (const std::optional<InputError> input = FindInputError(status); input.has_value()) {
    return {"input", std::string(input->problem == InputProblem::kTooLong ? kContextLengthExceeded
                                                                          : kInvalidValue)};
  }
  return {"", std::string(kInvalidValue)};
}

nlohmann::json NullIfEmpty(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

// The shape kNone answers in: TEI's.
Api Shaped(Api api) { return api == Api::kNone ? Api::kTei : api; }

// How an input too long for the model is cut on `api`'s routes.
const char* TruncationHint(Api api) {
  switch (api) {
    case Api::kOpenAi:
      return " (send \"truncate\": true to cut it, or start the server with --auto-truncate)";
    case Api::kCohere:
      return " (send \"truncate\": \"END\" or \"START\" to cut it)";
    case Api::kNone:
    case Api::kTei:
      break;
  }
  return " (send \"truncate\": true to cut it)";
}

}  // namespace

absl::Status WithOpenAiDetail(absl::Status status, absl::string_view param,
                              absl::string_view code) {
  status.SetPayload(kOpenAiDetailPayload, absl::Cord(absl::StrCat(param, "\n", code)));
  return status;
}

absl::Status FieldError(absl::string_view param, absl::string_view code,
                        absl::string_view message) {
  return WithOpenAiDetail(absl::InvalidArgumentError(message), param, code);
}

absl::Status ForEmbeddingsRoute(const absl::Status& status, Api api, bool input_is_list) {
  const std::optional<InputError> input = FindInputError(status);
  if (!input.has_value()) return status;
  const bool too_long = input->problem == InputProblem::kTooLong;
  absl::Status out = status;
  if (too_long) {
    // Only what this route accepts; payloads are kept.
    out = absl::Status(status.code(), absl::StrCat(status.message(), TruncationHint(api)));
    status.ForEachPayload(
        [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  }
  if (api != Api::kOpenAi) return out;
  const std::string param = input->index >= 0 && input_is_list
                                ? absl::StrCat("input[", input->index, "]")
                                : std::string("input");
  return WithOpenAiDetail(std::move(out), param, too_long ? kContextLengthExceeded : kInvalidValue);
}

int HttpStatusFor(absl::StatusCode code, Api api) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:  // text to a model without a tokenizer
      return Shaped(api) == Api::kTei ? 422 : 400;
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

int HttpStatusFor(const absl::Status& status, Api api) {
  api = Shaped(api);
  // TEI answers its Empty type with 400, its other validation errors with 422.
  if (api == Api::kTei && status.code() == absl::StatusCode::kInvalidArgument &&
      IsEmptyInput(status)) {
    return 400;
  }
  // A head the model lacks (rerank on an embedding model): TEI's 424, kept
  // on Cohere's routes (the same failed dependency).
  if (api != Api::kOpenAi && core::IsMissingHead(status)) return 424;
  return HttpStatusFor(status.code(), api);
}

std::string ErrorBody(const absl::Status& status, int http_status, Api api) {
  nlohmann::json body;
  const std::string message(status.message());
  switch (Shaped(api)) {
    case Api::kOpenAi: {
      const OpenAiDetail detail =
          FindOpenAiDetail(status).value_or(DeriveOpenAiDetail(status, http_status));
      body["error"] = {{"message", message},
                       {"type", OpenAiErrorType(http_status)},
                       {"param", NullIfEmpty(detail.param)},
                       {"code", NullIfEmpty(detail.code)}};
      break;
    }
    case Api::kCohere:
      body = {{"message", message}};
      break;
    case Api::kNone:
    case Api::kTei:
      body = {{"error", message}, {"error_type", TeiErrorType(status, http_status)}};
      break;
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
    case 424:
      return "Failed Dependency";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
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
