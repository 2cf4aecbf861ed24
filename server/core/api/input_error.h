// Which input of a request an INVALID_ARGUMENT is about, and what is wrong
// with it, carried beside the message (as an absl::Status payload) so that
// each transport can answer in its own terms: OpenAI's "param": "input[3]"
// and "code": "context_length_exceeded", TEI's "Empty" error type, the hint
// naming the truncate option the route accepts. The message stays readable
// alone ("input 3: text is 602 tokens long, ...").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/optional.h"

namespace server::core {

enum class InputProblem {
  kInvalid,  // any other reason
  kEmpty,    // no inputs, an empty text, no ids
  kTooLong,  // longer than the model's maximum, truncation off
};

struct InputError {
  int index = -1;  // -1: the request as a whole
  InputProblem problem = InputProblem::kInvalid;
};

inline constexpr char kInputErrorPayload[] = "encoder-service/input-error";

// `status` marked with `problem`, for an input whose index is not known yet.
inline absl::Status WithInputProblem(InputProblem problem, absl::Status status) {
  status.SetPayload(kInputErrorPayload,
                    absl::Cord(absl::StrCat(-1, " ", static_cast<int>(problem))));
  return status;
}

inline std::optional<InputError> FindInputError(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kInputErrorPayload);
  if (!payload.has_value()) return std::nullopt;
  const std::pair<std::string, std::string> fields =
      absl::StrSplit(std::string(*payload), absl::MaxSplits(' ', 1));
  InputError error;
  int problem = 0;
  if (!absl::SimpleAtoi(fields.first, &error.index) || !absl::SimpleAtoi(fields.second, &problem)) {
    return std::nullopt;
  }
  error.problem = static_cast<InputProblem>(problem);
  return error;
}

// `status` about input `index`: the message gets the prefix "input N: ", the
// payload the index (and keeps a problem already marked).
inline absl::Status WithInputIndex(int index, const absl::Status& status) {
  const InputProblem problem = FindInputError(status).value_or(InputError{}).problem;
  absl::Status indexed(status.code(), absl::StrCat("input ", index, ": ", status.message()));
  indexed.SetPayload(kInputErrorPayload,
                     absl::Cord(absl::StrCat(index, " ", static_cast<int>(problem))));
  return indexed;
}

}  // namespace server::core
