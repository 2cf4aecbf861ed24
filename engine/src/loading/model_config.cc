#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/config.h"
#include "engine/model_files.h"
#include "families/architecture.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

using nlohmann::json;

absl::Status ConfigError(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// Reads a positive (or, with `zero_ok`, non-negative) integer field;
// `required` fields must be present.
absl::Status ReadPositiveInt(const json& j, const char* key, bool required, int* out,
                             const std::string& source, bool zero_ok = false) {
  if (!j.contains(key)) {
    return required ? ConfigError(source, absl::StrCat("missing \"", key, "\"")) : absl::OkStatus();
  }
  const json& v = j[key];
  const int64_t least = zero_ok ? 0 : 1;
  if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > (1 << 30)) {
    return ConfigError(
        source, absl::StrCat("\"", key, "\" must be a ", zero_ok ? "non-negative" : "positive",
                             " integer, got ", v.dump()));
  }
  *out = v.get<int>();
  return absl::OkStatus();
}

// A gated feed-forward's config may name the gated unit (NomicBert's
// "swiglu", JinaBERT's "geglu") for its activation.
absl::StatusOr<Activation> ParseActivation(const std::string& name, bool gated, const char* key,
                                           const std::string& source) {
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (gated && name == "swiglu") return Activation::kSilu;
  if (gated && name == "geglu") return Activation::kGeluErf;
  if (gated && name == "reglu") return Activation::kRelu;
  return ConfigError(source,
                     absl::StrCat("unsupported ", key, " \"", name,
                                  "\" (supported: gelu, gelu_new, gelu_pytorch_tanh, relu, silu",
                                  gated ? ", swiglu, geglu, reglu)" : ")"));
}

// Reads a positive finite number into `out` when `key` is present.
absl::Status ReadPositiveNumber(const json& j, const char* key, float* out,
                                const std::string& source) {
  if (key == nullptr || !j.contains(key)) return absl::OkStatus();
  const json& v = j[key];
  const double value = v.is_number() ? v.get<double>() : 0.0;
  if (!(value > 0) || value > std::numeric_limits<float>::max()) {
    return ConfigError(source,
                       absl::StrCat("\"", key, "\" must be a positive number, got ", v.dump()));
  }
  *out = static_cast<float>(value);
  return absl::OkStatus();
}

absl::Status ReadBool(const json& j, const char* key, bool* out, const std::string& source) {
  if (key == nullptr || !j.contains(key)) return absl::OkStatus();
  if (!j[key].is_boolean()) {
    return ConfigError(source,
                       absl::StrCat("\"", key, "\" must be true or false, got ", j[key].dump()));
  }
  *out = j[key].get<bool>();
  return absl::OkStatus();
}

// A key (where the family has it) whose value the engine cannot run unless
// it is `supported` (null: a scaling or capping not implemented; false: a
// switch to a mode not implemented).
absl::Status CheckOnly(const json& j, const char* key, const json& supported,
                       const std::string& source) {
  if (key == nullptr || !j.contains(key) || j[key] == supported) return absl::OkStatus();
  return ConfigError(source, absl::StrCat("unsupported ", key, " ", j[key].dump(),
                                          " (supported: ", supported.dump(), ")"));
}

// A ServedValue of the family: absent, null or its served value.
absl::Status CheckServedValue(const json& j, const ServedValue& only, const std::string& source) {
  const auto found = j.find(only.key);
  if (found == j.end() || found->is_null()) return absl::OkStatus();
  const json served = json::parse(only.served);
  if (*found == served) return absl::OkStatus();
  return ConfigError(source, absl::StrCat("unsupported ", only.key, " ", found->dump(),
                                          " (supported: ", served.dump(), ")"));
}

// position_embedding_type, where the family has the key, must name the
// recipe's scheme.
absl::Status CheckPositionEmbeddingType(const json& j, const ConfigKeys& keys,
                                        const std::string& source) {
  const char* key = keys.position_embedding_type;
  if (key == nullptr || !j.contains(key) || j[key] == keys.position_embedding_value) {
    return absl::OkStatus();
  }
  return ConfigError(source, absl::StrCat("unsupported ", key, " ", j[key].dump(),
                                          " (supported: ", keys.position_embedding_value, ")"));
}

// The rotary keys: bases, the rotated share of each head, interleaving and
// GTE's NTK scaling.
absl::Status ReadRotary(const json& j, const ConfigKeys& keys, const ConfigDefaults& defaults,
                        ModelConfig* config, const std::string& source) {
  RotaryConfig& rotary = config->rotary;
  RETURN_IF_ERROR(ReadPositiveNumber(j, keys.rotary_base, &rotary.base, source));
  if (absl::Status s =
          ReadPositiveNumber(j, keys.rotary_local_base, &config->local_rotary_base, source);
      !s.ok()) {
    return s;
  }
  float fraction = defaults.rotary_fraction;
  RETURN_IF_ERROR(ReadPositiveNumber(j, keys.rotary_fraction, &fraction, source));
  const int head = config->head_size();
  const float dims = fraction * static_cast<float>(head);
  if (fraction > 1 || dims < 2 || dims != static_cast<float>(static_cast<int>(dims)) ||
      static_cast<int>(dims) % 2 != 0) {
    return ConfigError(source,
                       absl::StrCat("\"", keys.rotary_fraction, "\" ", fraction, " of a ", head,
                                    "-wide head is not an even number of dimensions"));
  }
  rotary.dims = static_cast<int>(dims) == head ? 0 : static_cast<int>(dims);
  RETURN_IF_ERROR(ReadBool(j, keys.rotary_interleaved, &rotary.interleaved, source));
  RETURN_IF_ERROR(CheckOnly(j, keys.rotary_unsupported_scaling, nullptr, source));
  if (keys.rope_scaling != nullptr && j.contains(keys.rope_scaling) &&
      !j[keys.rope_scaling].is_null()) {
    const json& scaling = j[keys.rope_scaling];
    const bool ntk = scaling.is_object() && scaling.contains("type") && scaling["type"] == "ntk" &&
                     !scaling.contains("mixed_b");
    if (!ntk) {
      return ConfigError(
          source, absl::StrCat("unsupported ", keys.rope_scaling, " ", scaling.dump(),
                               " (supported: {\"type\": \"ntk\", ", "\"factor\": f} or null)"));
    }
    RETURN_IF_ERROR(ReadPositiveNumber(scaling, "factor", &rotary.ntk_factor, source));
    if (!scaling.contains("factor")) {
      return ConfigError(source, absl::StrCat("\"", keys.rope_scaling, "\" has no \"factor\""));
    }
  }
  return absl::OkStatus();
}

// The attention's heads where a family's config gives them apart from the
// hidden size (decoder families): K/V heads, the head width and the scale.
absl::Status ReadAttentionHeads(const json& j, const ConfigKeys& keys, ModelConfig* config,
                                const std::string& source) {
  for (auto [key, field] : {std::pair<const char*, int*>{keys.num_kv_heads, &config->num_kv_heads},
                            {keys.head_dim, &config->head_dim}}) {
    if (key == nullptr) continue;
    RETURN_IF_ERROR(ReadPositiveInt(j, key, false, field, source));
  }
  if (config->num_heads % config->kv_heads() != 0) {
    return ConfigError(
        source, absl::StrCat("num_attention_heads ", config->num_heads, " is not a multiple of \"",
                             keys.num_kv_heads, "\" ", config->num_kv_heads));
  }
  if (config->head_dim == 0 && config->hidden_size % config->num_heads != 0) {
    return ConfigError(
        source, absl::StrCat("hidden_size ", config->hidden_size,
                             " is not divisible by num_attention_heads ", config->num_heads));
  }
  return ReadPositiveNumber(j, keys.attention_scale_base, &config->attention_scale_base, source);
}

// Gemma 3's sliding-window and full layers: layer_types, or every
// sliding_pattern-th layer (counting from 1) full without it.
absl::Status ReadLayerTypes(const json& j, const ConfigKeys& keys, const ConfigDefaults& defaults,
                            ModelConfig* config, const std::string& source) {
  int pattern = defaults.sliding_pattern;
  RETURN_IF_ERROR(ReadPositiveInt(j, keys.sliding_pattern, false, &pattern, source));
  std::vector<bool>& sliding = config->sliding_layers;
  sliding.clear();
  if (j.contains(keys.layer_types) && !j[keys.layer_types].is_null()) {
    const json& types = j[keys.layer_types];
    if (!types.is_array() || types.size() != static_cast<size_t>(config->num_layers)) {
      return ConfigError(source, absl::StrCat("\"", keys.layer_types, "\" must list ",
                                              config->num_layers, " layer types"));
    }
    for (const json& type : types) {
      if (type != "sliding_attention" && type != "full_attention") {
        return ConfigError(source,
                           absl::StrCat("unsupported ", keys.layer_types, " entry ", type.dump(),
                                        " (supported: sliding_attention, full_attention)"));
      }
      sliding.push_back(type == "sliding_attention");
    }
  }
  int window = defaults.sliding_window;
  if (j.contains(keys.sliding_window) && !j[keys.sliding_window].is_null()) {
    RETURN_IF_ERROR(ReadPositiveInt(j, keys.sliding_window, false, &window, source));
  }
  SetLayerTypes(sliding.empty() ? pattern : 0, window, config);
  const bool any_sliding = std::find(sliding.begin(), sliding.end(), true) != sliding.end();
  if (any_sliding && config->local_window < 1) {
    return ConfigError(source,
                       absl::StrCat("\"", keys.sliding_window, "\" ", window, " is too small"));
  }
  return absl::OkStatus();
}

// The config.json spelling of an activation (the gated unit's name where
// the family's key names the unit: "swiglu").
const char* ActivationConfigName(Activation activation, bool gated) {
  switch (activation) {
    case Activation::kGeluErf:
      return gated ? "geglu" : "gelu";
    case Activation::kGeluTanh:
      return "gelu_new";
    case Activation::kRelu:
      return gated ? "reglu" : "relu";
    case Activation::kSilu:
      return gated ? "swiglu" : "silu";
  }
  return "gelu";
}

}  // namespace

absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& error) {
    return ConfigError(source, DescribeJsonSyntaxError(json_text, error.byte, error.what()));
  } catch (const json::exception& error) {  // a number out of range, ...
    return ConfigError(source, absl::StrCat("not valid JSON: ", error.what()));
  }
  return ReadModelConfig(j, source);
}

absl::StatusOr<ModelConfig> ReadModelConfig(const json& j, const std::string& source) {
  if (!j.is_object()) return ConfigError(source, "not a JSON object");

  if (!j.contains("model_type") || !j["model_type"].is_string()) {
    return ConfigError(source, "missing \"model_type\"");
  }
  const std::string model_type = j["model_type"].get<std::string>();
  const Architecture* architecture = SelectArchitecture(model_type, [&](const std::string& key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  });
  if (architecture == nullptr) {
    return ConfigError(source, absl::StrCat("unsupported model_type \"", model_type,
                                            "\" (supported: ", SupportedModelTypes(), ")"));
  }
  // The family's rules and defaults, then config.json's values over them.
  ModelConfig config = FamilyDefaults(*architecture, model_type);
  const ConfigKeys& keys = architecture->keys;
  const Recipe& recipe = architecture->recipe;
  for (auto [key, required, field] :
       {std::tuple<const char*, bool, int*>{"vocab_size", true, &config.vocab_size},
        {keys.hidden_size, true, &config.hidden_size},
        {keys.num_layers, true, &config.num_layers},
        {keys.num_heads, true, &config.num_heads},
        {keys.intermediate_size, true, &config.intermediate_size},
        {keys.max_position_embeddings, false, &config.max_position_embeddings}}) {
    if (key == nullptr) continue;
    RETURN_IF_ERROR(ReadPositiveInt(j, key, required, field, source));
  }
  // GTE v1.5 has no token types: 0.
  if (keys.type_vocab_size != nullptr) {
    RETURN_IF_ERROR(ReadPositiveInt(j, keys.type_vocab_size, false, &config.type_vocab_size, source,
                                    /*zero_ok=*/true));
  }
  if (recipe.embedding_projection) {
    if (absl::Status s =
            ReadPositiveInt(j, keys.embedding_size, false, &config.embedding_size, source);
        !s.ok()) {
      return s;
    }
  }
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
    case AttentionBias::kAlibi:
      break;
    case AttentionBias::kRelativeBuckets:
      RETURN_IF_ERROR(ReadPositiveInt(j, keys.relative_attention_buckets, false,
                                      &config.relative_attention_buckets, source));
      if (config.relative_attention_buckets < 2) {
        return ConfigError(
            source, absl::StrCat("\"", keys.relative_attention_buckets, "\" must be at least 2"));
      }
      break;
  }
  if (j.contains("pad_token_id") && j["pad_token_id"].is_number_integer()) {
    config.pad_token_id = j["pad_token_id"].get<int>();
  }
  if (keys.layer_norm_eps != nullptr && j.contains(keys.layer_norm_eps)) {
    // It is used as a float: it must stay positive and finite as one (1e-50
    // would become 0 and 1e39 infinity; a double out of float's range does
    // not even convert to float with defined behavior).
    const json& v = j[keys.layer_norm_eps];
    const double eps = v.is_number() ? v.get<double>() : 0.0;
    if (!(eps > 0) || eps > std::numeric_limits<float>::max() ||
        static_cast<float>(eps) < std::numeric_limits<float>::min()) {
      return ConfigError(source, absl::StrCat("\"", keys.layer_norm_eps,
                                              "\" must be a positive number within float's "
                                              "normal range, got ",
                                              v.dump()));
    }
    config.layer_norm_eps = static_cast<float>(eps);
  }
  if (j.contains(keys.activation)) {
    if (!j[keys.activation].is_string()) {
      return ConfigError(source, absl::StrCat("\"", keys.activation, "\" must be a string"));
    }
    absl::StatusOr<Activation> act = ParseActivation(j[keys.activation].get<std::string>(),
                                                     config.gated_ffn, keys.activation, source);
    if (!act.ok()) return act.status();
    config.activation = *act;
  }
  switch (recipe.norm_placement) {
    case NormPlacement::kPost:
    case NormPlacement::kPre:
      break;
    case NormPlacement::kFromConfig:
      if (j.contains(keys.layer_norm_placement)) {
        const json& v = j[keys.layer_norm_placement];
        if (v == "post") {
          config.layer_norm_placement = LayerNormPlacement::kPost;
        } else if (v == "pre") {
          config.layer_norm_placement = LayerNormPlacement::kPre;
        } else {
          return ConfigError(source,
                             absl::StrCat("\"", keys.layer_norm_placement,
                                          "\" must be \"pre\" or \"post\", got ", v.dump()));
        }
      }
      break;
  }
  RETURN_IF_ERROR(ReadAttentionHeads(j, keys, &config, source));
  for (auto [key, supported] : {std::pair<const char*, json>{keys.prenorm, false},
                                {keys.sliding_switch, false},
                                {keys.attention_softcap, nullptr}}) {
    RETURN_IF_ERROR(CheckOnly(j, key, supported, source));
  }
  for (const ServedValue& only : keys.served_only) {
    RETURN_IF_ERROR(CheckServedValue(j, only, source));
  }
  switch (recipe.mask) {
    case AttentionMask::kBidirectional:
    case AttentionMask::kCausal:
      break;
    case AttentionMask::kFromConfig: {
      bool bidirectional = !config.causal;
      RETURN_IF_ERROR(ReadBool(j, keys.bidirectional, &bidirectional, source));
      config.causal = !bidirectional;
      break;
    }
  }
  switch (recipe.embedding_scale) {
    case EmbeddingScale::kNone:
      break;
    case EmbeddingScale::kSqrtHidden:
      config.embedding_scale =
          static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)));
      break;
  }
  RETURN_IF_ERROR(CheckPositionEmbeddingType(j, keys, source));
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
    case PositionScheme::kNone:
      break;
    case PositionScheme::kRotary:
      RETURN_IF_ERROR(ReadRotary(j, keys, architecture->defaults, &config, source));
      break;
  }
  switch (recipe.attention) {
    case AttentionPattern::kGlobal:
      break;
    case AttentionPattern::kAlternating: {
      int local_attention = 2 * config.local_window;
      for (auto [key, field] :
           {std::pair<const char*, int*>{keys.local_attention, &local_attention},
            {keys.global_every_n, &config.global_every_n}}) {
        RETURN_IF_ERROR(ReadPositiveInt(j, key, false, field, source));
      }
      config.local_window = local_attention / 2;
      break;
    }
    case AttentionPattern::kLayerTypes:
      RETURN_IF_ERROR(ReadLayerTypes(j, keys, architecture->defaults, &config, source));
      break;
  }
  for (auto [key, field] :
       {std::pair<const char*, bool*>{keys.attention_bias, &config.biases.attention},
        {keys.ffn_in_bias, &config.biases.ffn_in},
        {keys.ffn_out_bias, &config.biases.ffn_out},
        {keys.norm_bias, &config.biases.norm}}) {
    RETURN_IF_ERROR(ReadBool(j, key, field, source));
  }
  if (config.pad_token_id < 0 || config.pad_token_id >= config.vocab_size) {
    if (config.position_ids == PositionIds::kAfterPadding) {
      return ConfigError(source, absl::StrCat("\"pad_token_id\" ", config.pad_token_id,
                                              " must be a token of the vocabulary: positions "
                                              "count from it"));
    }
    config.pad_token_id = 0;
  }
  if (config.max_length() < 1) {
    return ConfigError(
        source, absl::StrCat("\"max_position_embeddings\" ", config.max_position_embeddings,
                             " leaves no position after pad_token_id ", config.pad_token_id));
  }
  return config;
}

std::string ModelConfigToJson(const ModelConfig& config) {
  const Architecture* architecture = &ArchitectureOf(config);
  const ConfigKeys& keys = architecture->keys;
  const Recipe& recipe = architecture->recipe;
  json j = {
      {"model_type", config.model_type},
      {"vocab_size", config.vocab_size},
      {keys.hidden_size, config.hidden_size},
      {keys.num_layers, config.num_layers},
      {keys.num_heads, config.num_heads},
      {keys.intermediate_size, config.intermediate_size},
      {keys.activation, ActivationConfigName(config.activation, keys.activation_names_gated_unit)},
      {keys.max_position_embeddings, config.max_position_embeddings},
      {"pad_token_id", config.pad_token_id},
  };
  j["architectures"] = {ClassPrefix(*architecture, config.model_type) + "Model"};
  if (keys.layer_norm_eps != nullptr) j[keys.layer_norm_eps] = config.layer_norm_eps;
  if (keys.type_vocab_size != nullptr) j[keys.type_vocab_size] = config.type_vocab_size;
  if (keys.position_embedding_type != nullptr) {
    j[keys.position_embedding_type] = keys.position_embedding_value;
  }
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
    case PositionScheme::kNone:
      break;
    case PositionScheme::kRotary: {
      const RotaryConfig& rotary = config.rotary;
      j[keys.rotary_base] = rotary.base;
      if (keys.rotary_local_base != nullptr && config.local_rotary_base > 0) {
        j[keys.rotary_local_base] = config.local_rotary_base;
      }
      if (keys.rotary_fraction != nullptr) {
        j[keys.rotary_fraction] =
            rotary.dims > 0 ? static_cast<double>(rotary.dims) / config.head_size() : 1.0;
      }
      if (keys.rotary_interleaved != nullptr) j[keys.rotary_interleaved] = rotary.interleaved;
      if (keys.rope_scaling != nullptr && rotary.ntk_factor > 0) {
        j[keys.rope_scaling] = {{"type", "ntk"}, {"factor", rotary.ntk_factor}};
      }
      break;
    }
  }
  switch (recipe.attention) {
    case AttentionPattern::kGlobal:
      break;
    case AttentionPattern::kAlternating:
      j[keys.local_attention] = 2 * config.local_window;
      j[keys.global_every_n] = config.global_every_n;
      break;
    case AttentionPattern::kLayerTypes: {
      json types = json::array();
      for (int l = 0; l < config.num_layers; ++l) {
        types.push_back(config.attention_window(l) > 0 ? "sliding_attention" : "full_attention");
      }
      j[keys.layer_types] = types;
      // The inverse of ReadLayerTypes.
      j[keys.sliding_window] = config.causal ? config.local_window + 1 : 2 * config.local_window;
      break;
    }
  }
  switch (recipe.mask) {
    case AttentionMask::kBidirectional:
    case AttentionMask::kCausal:
      break;
    case AttentionMask::kFromConfig:
      j[keys.bidirectional] = !config.causal;
      break;
  }
  if (keys.num_kv_heads != nullptr) j[keys.num_kv_heads] = config.kv_heads();
  if (keys.head_dim != nullptr) j[keys.head_dim] = config.head_size();
  if (keys.attention_scale_base != nullptr && config.attention_scale_base > 0) {
    j[keys.attention_scale_base] = config.attention_scale_base;
  }
  for (auto [key, value] :
       {std::pair<const char*, bool>{keys.attention_bias, config.biases.attention},
        {keys.ffn_in_bias, config.biases.ffn_in},
        {keys.ffn_out_bias, config.biases.ffn_out},
        {keys.norm_bias, config.biases.norm}}) {
    if (key != nullptr) j[key] = value;
  }
  if (recipe.embedding_projection && config.embedding_size > 0) {
    j[keys.embedding_size] = config.embedding_size;
  }
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
    case AttentionBias::kAlibi:
      break;
    case AttentionBias::kRelativeBuckets:
      j[keys.relative_attention_buckets] = config.relative_attention_buckets;
      break;
  }
  switch (recipe.norm_placement) {
    case NormPlacement::kPost:
    case NormPlacement::kPre:
      break;
    case NormPlacement::kFromConfig:
      j[keys.layer_norm_placement] = LayerNormPlacementName(config.layer_norm_placement);
      break;
  }
  return j.dump(2) + "\n";
}

const char* ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kGeluErf:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kRelu:
      return "relu";
    case Activation::kSilu:
      return "silu";
  }
  return "?";
}

const char* LayerNormPlacementName(LayerNormPlacement placement) {
  return placement == LayerNormPlacement::kPre ? "pre" : "post";
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kInt8:
      return "int8";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFloat32:
      break;
  }
  return "fp32";
}

bool ParsePrecision(const std::string& name, Precision* precision) {
  for (Precision candidate : kAllPrecisions) {
    if (name == PrecisionName(candidate)) {
      *precision = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace engine
