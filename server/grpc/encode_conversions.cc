#include "server/grpc/encode_conversions.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/grpc/common_conversions.h"

namespace server {
namespace {

absl::StatusOr<core::PoolingChoice> ToCore(encoder::v1::Pooling pooling) {
  switch (pooling) {
    case encoder::v1::POOLING_UNSPECIFIED:
      return core::PoolingChoice::kModelDefault;
    case encoder::v1::POOLING_CLS:
      return core::PoolingChoice::kCls;
    case encoder::v1::POOLING_MEAN:
      return core::PoolingChoice::kMean;
    case encoder::v1::POOLING_NONE:
      return core::PoolingChoice::kNone;
    case encoder::v1::POOLING_POOLER:
      return core::PoolingChoice::kPooler;
    case encoder::v1::POOLING_MAX:
      return core::PoolingChoice::kMax;
    case encoder::v1::POOLING_MEAN_SQRT_LEN:
      return core::PoolingChoice::kMeanSqrtLen;
    case encoder::v1::POOLING_WEIGHTED_MEAN:
      return core::PoolingChoice::kWeightedMean;
    case encoder::v1::POOLING_LAST_TOKEN:
      return core::PoolingChoice::kLastToken;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown pooling value ", static_cast<int>(pooling),
      " (expected 0 UNSPECIFIED, 1 CLS, 2 MEAN, 3 NONE, 4 POOLER, 5 MAX, 6 MEAN_SQRT_LEN, "
      "7 WEIGHTED_MEAN or 8 LAST_TOKEN)"));
}

}  // namespace

absl::StatusOr<core::EncodeRequest> ToCore(const encoder::v1::EncodeRequest& request) {
  core::EncodeRequest out;
  ASSIGN_OR_RETURN(out.pooling, ToCore(request.pooling()));
  // normalize (4) true wins; else normalize_output (10) when set; else the model's pipeline.
  if (request.normalize()) {
    if (request.has_normalize_output() && !request.normalize_output()) {
      return absl::InvalidArgumentError(
          "normalize true and normalize_output false contradict each other");
    }
    out.normalize = true;
  } else if (request.has_normalize_output()) {
    out.normalize = request.normalize_output();
  }
  out.dimensions = request.dimensions();
  out.prompt = request.prompt();
  // Unset leaves the choice to the server's --auto-truncate.
  if (request.has_truncate()) out.truncate = request.truncate();
  RETURN_IF_ERROR(LongInputFromProto(request.long_input(), &out.long_input));
  ASSIGN_OR_RETURN(out.truncation_side, ToCore(request.truncation_direction()));
  out.prompt_name = request.prompt_name();
  out.inputs = ToCore(request.inputs());
  return out;
}

void SetWindows(const std::vector<int>& windows, encoder::v1::EncodeResponse* response) {
  for (size_t i = 0; i < windows.size() && i < static_cast<size_t>(response->outputs_size()); ++i) {
    response->mutable_outputs(static_cast<int>(i))->set_windows(windows[i]);
  }
}

void FillEncodeResponse(const std::string& id, engine::Pooling pooling,
                        const std::vector<core::InputOutput>& outputs,
                        encoder::v1::EncodeResponse* response) {
  response->set_id(id);
  response->set_pooling(ToProto(pooling));
  response->mutable_outputs()->Reserve(static_cast<int>(outputs.size()));
  for (const core::InputOutput& output : outputs) {
    encoder::v1::Output* out = response->add_outputs();
    out->mutable_values()->Assign(output.values.begin(), output.values.end());
    out->set_rows(output.rows);
    out->set_cols(output.cols);
    out->set_tokens(output.tokens);
  }
}

absl::StatusOr<core::TokenizeRequest> ToCore(const encoder::v1::TokenizeRequest& request) {
  ASSIGN_OR_RETURN(const engine::TruncationSide side, ToCore(request.truncation_direction()));
  return core::TokenizeRequest{request.text(), request.text_pair(), request.truncate(), side};
}

void ToProto(const engine::Encoding& encoding, encoder::v1::TokenizeResponse* response) {
  response->mutable_ids()->Assign(encoding.ids.begin(), encoding.ids.end());
  response->mutable_token_type_ids()->Assign(encoding.token_type_ids.begin(),
                                             encoding.token_type_ids.end());
  for (const std::string& token : encoding.tokens) response->add_tokens(token);
  for (const auto& [begin, end] : encoding.offsets) {
    encoder::v1::Offset* offset = response->add_offsets();
    offset->set_begin(begin);
    offset->set_end(end);
  }
}

absl::StatusOr<core::DecodeRequest> ToCore(const encoder::v1::DecodeRequest& request) {
  core::DecodeRequest decode;
  decode.ids.assign(request.ids().begin(), request.ids().end());
  decode.skip_special_tokens = !request.keep_special_tokens();
  return decode;
}

void ToProto(std::string text, encoder::v1::DecodeResponse* response) {
  response->set_text(std::move(text));
}

}  // namespace server
