// common/status_macros.h: each macro returns the failed status (or the
// error expression's value) and otherwise goes on with the value.
#include "common/status_macros.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

int calls = 0;

absl::Status Counted(absl::Status status) {
  ++calls;
  return status;
}

absl::StatusOr<std::unique_ptr<int>> MakeValue(int value) {
  ++calls;
  if (value < 0) return absl::InvalidArgumentError(absl::StrCat("negative: ", value));
  return std::make_unique<int>(value);
}

absl::Status CheckTwice(absl::Status first, absl::Status second) {
  RETURN_IF_ERROR(Counted(first));
  RETURN_IF_ERROR(Counted(second));
  return absl::OkStatus();
}

absl::StatusOr<int> Sum(int a, int b) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> x, MakeValue(a));
  ASSIGN_OR_RETURN(auto y, MakeValue(b));
  return *x + *y;
}

absl::Status SumInto(int a, int* out) {
  std::unique_ptr<int> value;
  ASSIGN_OR_RETURN(value, MakeValue(a),
                   absl::InvalidArgumentError(absl::StrCat("input 3: ", _.message())));
  *out = *value;
  return absl::OkStatus();
}

absl::StatusOr<int> StatusOrOfStatusOr(int a) {
  RETURN_IF_ERROR(MakeValue(a));
  return a;
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  calls = 0;
  EXPECT_TRUE(CheckTwice(absl::OkStatus(), absl::OkStatus()).ok());
  EXPECT_EQ(calls, 2);
  calls = 0;
  const absl::Status status = CheckTwice(absl::NotFoundError("first"), absl::OkStatus());
  EXPECT_EQ(status, absl::NotFoundError("first"));
  EXPECT_EQ(calls, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorTakesAStatusOr) {
  EXPECT_EQ(*StatusOrOfStatusOr(4), 4);
  EXPECT_EQ(StatusOrOfStatusOr(-4).status(), absl::InvalidArgumentError("negative: -4"));
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValueOrReturnsTheError) {
  calls = 0;
  EXPECT_EQ(*Sum(2, 3), 5);
  EXPECT_EQ(calls, 2);
  calls = 0;
  EXPECT_EQ(Sum(-1, 3).status(), absl::InvalidArgumentError("negative: -1"));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(Sum(1, -3).status(), absl::InvalidArgumentError("negative: -3"));
}

TEST(StatusMacrosTest, AssignOrReturnReturnsTheErrorExpression) {
  int out = 0;
  EXPECT_TRUE(SumInto(7, &out).ok());
  EXPECT_EQ(out, 7);
  EXPECT_EQ(SumInto(-2, &out), absl::InvalidArgumentError("input 3: negative: -2"));
  EXPECT_EQ(out, 7);
}

}  // namespace
