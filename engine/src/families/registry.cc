#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "families/architecture.h"

namespace engine {

const std::vector<Architecture>& Architectures() {
  static const std::vector<Architecture> registry = {
      BertArchitecture(),  RobertaArchitecture(),    DistilBertArchitecture(),
      MpnetArchitecture(), ElectraArchitecture(),    NomicBertArchitecture(),
      GteArchitecture(),   ModernBertArchitecture(), JinaBertArchitecture(),
      Qwen3Architecture(), Gemma3Architecture(),
  };
  return registry;
}

const Architecture* FindArchitecture(const std::string& model_type) {
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      if (type.name == model_type && type.selector_key.empty()) return &architecture;
    }
  }
  return nullptr;
}

const Architecture* ArchitectureNamed(const std::string& name) {
  for (const Architecture& architecture : Architectures()) {
    if (architecture.name == name) return &architecture;
  }
  return nullptr;
}

const Architecture& ArchitectureOf(const ModelConfig& config) {
  const Architecture* named = ArchitectureNamed(config.architecture);
  return named != nullptr ? *named : Architectures().front();
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
    for (const ModelType& type : architecture.model_types) {
      types.push_back(type.selector_key.empty()
                          ? type.name
                          : absl::StrCat(type.name, " with ", type.selector_key, " \"",
                                         type.selector_value, "\""));
    }
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
  config.biases = recipe.biases;
  config.first_attention_norm = recipe.first_attention_norm;
  config.gated_ffn = recipe.feed_forward != FeedForward::kDense;
  config.int8_two_level_ffn_out = recipe.int8_two_level_ffn_out;
  switch (recipe.norm_placement) {
    case NormPlacement::kPost:
    case NormPlacement::kFromConfig:
      config.layer_norm_placement = LayerNormPlacement::kPost;
      break;
    case NormPlacement::kPre:
      config.layer_norm_placement = LayerNormPlacement::kPre;
      break;
  }
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
      config.position_embedding = PositionEmbedding::kLearned;
      break;
    case PositionScheme::kRotary:
      config.position_embedding = PositionEmbedding::kRotary;
      config.rotary.base = defaults.rotary_base;
      config.local_rotary_base = defaults.rotary_local_base;
      break;
    case PositionScheme::kNone:
      config.position_embedding = PositionEmbedding::kNone;
      break;
  }
  switch (recipe.attention) {
    case AttentionPattern::kGlobal:
      break;
    case AttentionPattern::kAlternating:
      config.local_window = defaults.local_attention / 2;
      config.global_every_n = defaults.global_every_n;
      break;
    case AttentionPattern::kLayerTypes:
      break;  // per layer, once the layer count is known (SetLayerTypes)
  }
  config.rms_norm = recipe.norm != NormKind::kLayerNorm;
  config.qk_norm = recipe.qk_norm;
  config.sublayer_output_norm = recipe.sublayer_output_norms;
  switch (recipe.mask) {
    case AttentionMask::kBidirectional:
      break;
    case AttentionMask::kCausal:
      config.causal = true;
      break;
    case AttentionMask::kFromConfig:
      config.causal = !defaults.bidirectional;
      break;
  }
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
      break;
    case AttentionBias::kRelativeBuckets:
      config.relative_attention_buckets = defaults.relative_attention_buckets;
      config.relative_attention_max_distance = recipe.relative_attention_max_distance;
      break;
    case AttentionBias::kAlibi:
      config.alibi = true;
      break;
  }
  return config;
}

void SetLayerTypes(int pattern, int sliding_window, ModelConfig* config) {
  config->local_window = config->causal ? sliding_window - 1 : sliding_window / 2;
  if (pattern <= 0) return;
  config->sliding_layers.clear();
  for (int l = 0; l < config->num_layers; ++l) {
    config->sliding_layers.push_back((l + 1) % pattern != 0);
  }
}

ModelConfig DefaultModelConfig() {
  const Architecture& first = Architectures().front();
  return FamilyDefaults(first, first.model_types.front().name);
}

}  // namespace engine
