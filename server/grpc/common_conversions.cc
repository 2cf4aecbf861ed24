#include "server/grpc/common_conversions.h"

#include "absl/strings/str_cat.h"

namespace server {

encoder::v1::Precision ToProto(engine::Precision precision) {
  switch (precision) {
    case engine::Precision::kInt8:
      return encoder::v1::PRECISION_INT8;
    case engine::Precision::kBf16:
      return encoder::v1::PRECISION_BF16;
    case engine::Precision::kFloat32:
      break;
  }
  return encoder::v1::PRECISION_FLOAT32;
}

encoder::v1::Pooling ToProto(engine::Pooling pooling) {
  switch (pooling) {
    case engine::Pooling::kCls:
      return encoder::v1::POOLING_CLS;
    case engine::Pooling::kMean:
      return encoder::v1::POOLING_MEAN;
    case engine::Pooling::kNone:
      return encoder::v1::POOLING_NONE;
    case engine::Pooling::kPooler:
      return encoder::v1::POOLING_POOLER;
    case engine::Pooling::kMax:
      return encoder::v1::POOLING_MAX;
    case engine::Pooling::kMeanSqrtLen:
      return encoder::v1::POOLING_MEAN_SQRT_LEN;
    case engine::Pooling::kWeightedMean:
      return encoder::v1::POOLING_WEIGHTED_MEAN;
    case engine::Pooling::kLastToken:
      return encoder::v1::POOLING_LAST_TOKEN;
  }
  return encoder::v1::POOLING_UNSPECIFIED;
}

core::Input ToCore(const encoder::v1::Input& input) {
  core::Input in;
  switch (input.kind_case()) {
    case encoder::v1::Input::kText:
      in.kind = core::Input::Kind::kText;
      in.text = input.text();
      break;
    case encoder::v1::Input::kTextPair:
      in.kind = core::Input::Kind::kTextPair;
      in.text = input.text_pair().text();
      in.text_pair = input.text_pair().text_pair();
      break;
    case encoder::v1::Input::kTokenIds:
      in.kind = core::Input::Kind::kTokenIds;
      in.ids.assign(input.token_ids().ids().begin(), input.token_ids().ids().end());
      in.token_type_ids.assign(input.token_ids().token_type_ids().begin(),
                               input.token_ids().token_type_ids().end());
      break;
    case encoder::v1::Input::KIND_NOT_SET:
      break;
  }
  return in;
}

std::vector<core::Input> ToCore(
    const google::protobuf::RepeatedPtrField<encoder::v1::Input>& inputs) {
  std::vector<core::Input> out;
  out.reserve(static_cast<size_t>(inputs.size()));
  for (const encoder::v1::Input& input : inputs) out.push_back(ToCore(input));
  return out;
}

absl::StatusOr<engine::TruncationSide> ToCore(encoder::v1::TruncationDirection direction) {
  switch (direction) {
    case encoder::v1::TRUNCATION_DIRECTION_RIGHT:
      return engine::TruncationSide::kRight;
    case encoder::v1::TRUNCATION_DIRECTION_LEFT:
      return engine::TruncationSide::kLeft;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown truncation_direction value ",
                                                 static_cast<int>(direction),
                                                 " (expected 0 RIGHT or 1 LEFT)"));
}

absl::Status LongInputFromProto(int value, std::optional<core::LongInput>* out) {
  switch (value) {
    case encoder::v1::LONG_INPUT_UNSPECIFIED:
      out->reset();
      return absl::OkStatus();
    case encoder::v1::LONG_INPUT_TRUNCATE:
      *out = core::LongInput::kTruncate;
      return absl::OkStatus();
    case encoder::v1::LONG_INPUT_WINDOW:
      *out = core::LongInput::kWindow;
      return absl::OkStatus();
    case encoder::v1::LONG_INPUT_ERROR:
      *out = core::LongInput::kError;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("long_input ", value, " is not a LongInput"));
  }
}

}  // namespace server
