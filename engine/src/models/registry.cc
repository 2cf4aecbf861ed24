#include <vector>

#include "absl/strings/str_join.h"
#include "models/architecture.h"

namespace engine {

const std::vector<Architecture>& Architectures() {
  static const std::vector<Architecture> registry = {
      BertArchitecture(),  RobertaArchitecture(), DistilBertArchitecture(),
      MpnetArchitecture(), ElectraArchitecture(),
  };
  return registry;
}

const Architecture* FindArchitecture(const std::string& model_type) {
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      if (type.name == model_type) return &architecture;
    }
  }
  return nullptr;
}

const std::string& ClassPrefix(const Architecture& architecture, const std::string& model_type) {
  for (const ModelType& type : architecture.model_types) {
    if (type.name == model_type) return type.class_prefix;
  }
  return architecture.model_types.front().class_prefix;
}

std::string SupportedModelTypes() {
  std::vector<std::string> types;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) types.push_back(type.name);
  }
  return absl::StrJoin(types, ", ");
}

ModelConfig FamilyDefaults(const Architecture& architecture, const std::string& model_type) {
  const Recipe& recipe = architecture.recipe;
  const ConfigDefaults& defaults = architecture.defaults;
  ModelConfig config;
  config.model_type = model_type;
  config.architecture = architecture.name;
  config.max_position_embeddings = defaults.max_position_embeddings;
  config.type_vocab_size = defaults.type_vocab_size;
  config.pad_token_id = defaults.pad_token_id;
  config.layer_norm_eps = defaults.layer_norm_eps;
  config.activation = defaults.activation;
  config.position_ids = recipe.position_ids;
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
      break;
    case AttentionBias::kRelativeBuckets:
      config.relative_attention_buckets = defaults.relative_attention_buckets;
      config.relative_attention_max_distance = recipe.relative_attention_max_distance;
      break;
  }
  return config;
}

ModelConfig DefaultModelConfig() {
  const Architecture& first = Architectures().front();
  return FamilyDefaults(first, first.model_types.front().name);
}

}  // namespace engine
