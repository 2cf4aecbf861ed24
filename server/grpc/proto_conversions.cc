#include "server/grpc/proto_conversions.h"

#include "absl/strings/str_cat.h"
#include "common/version.h"

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

absl::StatusOr<core::EncodeRequest> ToCore(const encoder::v1::EncodeRequest& request) {
  core::EncodeRequest out;
  switch (request.pooling()) {
    case encoder::v1::POOLING_UNSPECIFIED:
      out.pooling = core::PoolingChoice::kModelDefault;
      break;
    case encoder::v1::POOLING_CLS:
      out.pooling = core::PoolingChoice::kCls;
      break;
    case encoder::v1::POOLING_MEAN:
      out.pooling = core::PoolingChoice::kMean;
      break;
    case encoder::v1::POOLING_NONE:
      out.pooling = core::PoolingChoice::kNone;
      break;
    case encoder::v1::POOLING_POOLER:
      out.pooling = core::PoolingChoice::kPooler;
      break;
    case encoder::v1::POOLING_MAX:
      out.pooling = core::PoolingChoice::kMax;
      break;
    case encoder::v1::POOLING_MEAN_SQRT_LEN:
      out.pooling = core::PoolingChoice::kMeanSqrtLen;
      break;
    case encoder::v1::POOLING_WEIGHTED_MEAN:
      out.pooling = core::PoolingChoice::kWeightedMean;
      break;
    case encoder::v1::POOLING_LAST_TOKEN:
      out.pooling = core::PoolingChoice::kLastToken;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown pooling value ", static_cast<int>(request.pooling()),
          " (expected 0 UNSPECIFIED, 1 CLS, 2 MEAN, 3 NONE, 4 POOLER, 5 MAX, 6 MEAN_SQRT_LEN, "
          "7 WEIGHTED_MEAN or 8 LAST_TOKEN)"));
  }
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
  if (absl::Status status = LongInputFromProto(request.long_input(), &out.long_input);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<engine::TruncationSide> side = ToCore(request.truncation_direction());
  if (!side.ok()) return side.status();
  out.truncation_side = *side;
  out.prompt_name = request.prompt_name();
  out.inputs.reserve(static_cast<size_t>(request.inputs_size()));
  for (const encoder::v1::Input& input : request.inputs()) out.inputs.push_back(ToCore(input));
  return out;
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

absl::StatusOr<core::TokenizeRequest> ToCore(const encoder::v1::TokenizeRequest& request) {
  absl::StatusOr<engine::TruncationSide> side = ToCore(request.truncation_direction());
  if (!side.ok()) return side.status();
  return core::TokenizeRequest{request.text(), request.text_pair(), request.truncate(), *side};
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

absl::StatusOr<core::MultiRequest> ToCore(const encoder::v1::EncodeMultiRequest& request) {
  core::MultiRequest multi;
  for (const encoder::v1::Input& input : request.inputs()) multi.inputs.push_back(ToCore(input));
  for (int i = 0; i < request.outputs_size(); ++i) {
    bool* wanted = nullptr;
    switch (request.outputs(i)) {
      case encoder::v1::OUTPUT_KIND_DENSE:
        wanted = &multi.dense;
        break;
      case encoder::v1::OUTPUT_KIND_SPARSE:
        wanted = &multi.sparse;
        break;
      case encoder::v1::OUTPUT_KIND_COLBERT:
        wanted = &multi.colbert;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("outputs[", i, "]: unknown output kind ", request.outputs(i),
                         " (expected 1 DENSE, 2 SPARSE or 3 COLBERT)"));
    }
    if (*wanted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "outputs[", i, "]: ", encoder::v1::OutputKind_Name(request.outputs(i)), " asked twice"));
    }
    *wanted = true;
  }
  switch (request.input_type()) {
    case encoder::v1::INPUT_TYPE_DOCUMENT:
      multi.input_type = core::InputType::kDocument;
      break;
    case encoder::v1::INPUT_TYPE_QUERY:
      multi.input_type = core::InputType::kQuery;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown input_type value ",
                                                     static_cast<int>(request.input_type()),
                                                     " (expected 0 DOCUMENT or 1 QUERY)"));
  }
  multi.max_active_dims = request.max_active_dims();
  multi.return_tokens = request.return_tokens();
  if (request.has_truncate()) multi.truncate = request.truncate();
  absl::StatusOr<engine::TruncationSide> side = ToCore(request.truncation_direction());
  if (!side.ok()) return side.status();
  multi.truncation_side = *side;
  return multi;
}

void ToProto(core::MultiResult result, encoder::v1::EncodeMultiResponse* response) {
  for (core::MultiOutput& output : result.outputs) {
    encoder::v1::MultiOutput* out = response->add_outputs();
    out->mutable_dense()->Add(output.dense.begin(), output.dense.end());
    for (core::SparseValue& value : output.sparse) {
      encoder::v1::SparseEntry* entry = out->add_sparse();
      entry->set_id(value.id);
      entry->set_weight(value.weight);
      entry->set_token(std::move(value.token));
    }
    if (output.colbert_cols > 0) {
      encoder::v1::MultiVectors* colbert = out->mutable_colbert();
      colbert->mutable_values()->Add(output.colbert.begin(), output.colbert.end());
      colbert->set_rows(output.colbert_rows);
      colbert->set_cols(output.colbert_cols);
    }
    out->set_tokens(output.tokens);
  }
  response->set_tokens(result.tokens);
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

void SetWindows(const std::vector<int>& windows, encoder::v1::EncodeResponse* response) {
  for (size_t i = 0; i < windows.size() && i < static_cast<size_t>(response->outputs_size()); ++i) {
    response->mutable_outputs(static_cast<int>(i))->set_windows(windows[i]);
  }
}

void FillEncodeResponse(const std::string& id, engine::Pooling pooling,
                        const std::vector<InputOutput>& outputs,
                        encoder::v1::EncodeResponse* response) {
  response->set_id(id);
  response->set_pooling(ToProto(pooling));
  response->mutable_outputs()->Reserve(static_cast<int>(outputs.size()));
  for (const InputOutput& output : outputs) {
    encoder::v1::Output* out = response->add_outputs();
    out->mutable_values()->Assign(output.values.begin(), output.values.end());
    out->set_rows(output.rows);
    out->set_cols(output.cols);
    out->set_tokens(output.tokens);
  }
}

void FillTokenizeResponse(const engine::Encoding& encoding,
                          encoder::v1::TokenizeResponse* response) {
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

encoder::v1::ModelInfo MakeModelInfo(const ModelDescription& model) {
  encoder::v1::ModelInfo info;
  info.set_name(model.name);
  info.set_model_type(model.model_type);
  info.set_hidden_size(model.hidden_size);
  info.set_num_layers(model.num_layers);
  info.set_num_heads(model.num_heads);
  info.set_max_length(model.max_length);
  info.set_vocab_size(model.vocab_size);
  info.set_default_pooling(ToProto(model.default_pooling));
  info.set_precision(ToProto(model.precision));
  info.set_layer_norm_placement(model.layer_norm_placement == engine::LayerNormPlacement::kPre
                                    ? encoder::v1::LAYER_NORM_PLACEMENT_PRE
                                    : encoder::v1::LAYER_NORM_PLACEMENT_POST);
  info.set_has_pooler(model.has_pooler);
  info.set_max_inputs_per_request(model.max_inputs_per_request);
  info.set_isa(model.isa);
  info.set_architecture(model.architecture);
  info.set_text_input(model.text_input);
  info.set_server_version(common::Version());
  for (engine::Pooling mode : model.pooling_modes) info.add_pooling_modes(ToProto(mode));
  info.set_embedding_size(model.embedding_size);
  info.set_normalize(model.normalize);
  info.set_include_prompt(model.include_prompt);
  for (const auto& [name, text] : model.prompts) (*info.mutable_prompts())[name] = text;
  info.set_default_prompt_name(model.default_prompt_name);
  for (const std::string& label : model.labels) info.add_labels(label);
  info.set_sparse(model.sparse);
  info.set_colbert_dimensions(model.colbert_dimensions);
  return info;
}

}  // namespace server
