#include "server/grpc/model_info_conversions.h"

#include "common/version.h"
#include "server/grpc/common_conversions.h"

namespace server {

encoder::v1::ModelInfo MakeModelInfo(const core::ModelDescription& model) {
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
