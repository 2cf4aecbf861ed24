// Early returns on errors, shaped like Abseil's later ABSL_RETURN_IF_ERROR
// and ABSL_ASSIGN_OR_RETURN (Debian's Abseil 20220623 has neither):
//
//   RETURN_IF_ERROR(CheckInputCount(request.inputs.size()));
//   ASSIGN_OR_RETURN(OutputSpec spec, BuildSpec(request));
//   ASSIGN_OR_RETURN(auto input, BuildInput(inputs[i]), WithInputIndex(i, _));
//
// The optional third argument of ASSIGN_OR_RETURN is an expression over the
// failed `absl::Status` named `_`; its value is returned instead of the
// status itself (to add the input's index, say). Both work in functions
// returning absl::Status or absl::StatusOr<T>.
#pragma once

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace common::status_internal {

inline const absl::Status& AsStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace common::status_internal

#define STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define STATUS_MACROS_CONCAT_(x, y) STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `expr` (an absl::Status or absl::StatusOr<T>) once and returns its
// status from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                                           \
  do {                                                                  \
    const auto& status_macros_value_ = (expr);                          \
    if (ABSL_PREDICT_FALSE(!status_macros_value_.ok())) {               \
      return ::common::status_internal::AsStatus(status_macros_value_); \
    }                                                                   \
  } while (false)

#define STATUS_MACROS_ASSIGN_OR_RETURN_2_(lhs, expr) STATUS_MACROS_ASSIGN_OR_RETURN_3_(lhs, expr, _)

#define STATUS_MACROS_ASSIGN_OR_RETURN_3_(lhs, expr, error_expression)                          \
  STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_(STATUS_MACROS_CONCAT_(status_macros_or_, __LINE__), lhs, \
                                       expr, error_expression)

#define STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr, error_expression) \
  auto statusor = (expr);                                                           \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                                         \
    const absl::Status _ = std::move(statusor).status();                            \
    return (error_expression);                                                      \
  }                                                                                 \
  lhs = *std::move(statusor)

#define STATUS_MACROS_PICK_(_1, _2, _3, name, ...) name

// ASSIGN_OR_RETURN(lhs, expr) or ASSIGN_OR_RETURN(lhs, expr, error_expression):
// evaluates `expr` (an absl::StatusOr<T>); on an error returns it (or
// `error_expression`, over the status `_`), else moves its value into `lhs`
// (a declaration or an lvalue). One per line: the temporary is named after it.
#define ASSIGN_OR_RETURN(...)                                         \
  STATUS_MACROS_PICK_(__VA_ARGS__, STATUS_MACROS_ASSIGN_OR_RETURN_3_, \
                      STATUS_MACROS_ASSIGN_OR_RETURN_2_, unused)      \
  (__VA_ARGS__)
