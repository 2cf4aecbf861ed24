#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/config.h"
#include "engine/model_files.h"
#include "models/architecture.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

using nlohmann::json;

absl::Status ConfigError(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// Reads a positive integer field; `required` fields must be present.
absl::Status ReadPositiveInt(const json& j, const char* key, bool required, int* out,
                             const std::string& source) {
  if (!j.contains(key)) {
    return required ? ConfigError(source, absl::StrCat("missing \"", key, "\"")) : absl::OkStatus();
  }
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30)) {
    return ConfigError(source,
                       absl::StrCat("\"", key, "\" must be a positive integer, got ", v.dump()));
  }
  *out = v.get<int>();
  return absl::OkStatus();
}

absl::StatusOr<Activation> ParseActivation(const std::string& name, const char* key,
                                           const std::string& source) {
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  return ConfigError(source,
                     absl::StrCat("unsupported ", key, " \"", name,
                                  "\" (supported: gelu, gelu_new, gelu_pytorch_tanh, relu)"));
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
  if (!j.is_object()) return ConfigError(source, "not a JSON object");

  if (!j.contains("model_type") || !j["model_type"].is_string()) {
    return ConfigError(source, "missing \"model_type\"");
  }
  const std::string model_type = j["model_type"].get<std::string>();
  const Architecture* architecture = FindArchitecture(model_type);
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
        {"max_position_embeddings", false, &config.max_position_embeddings},
        {keys.type_vocab_size, false, &config.type_vocab_size}}) {
    if (key == nullptr) continue;
    if (absl::Status s = ReadPositiveInt(j, key, required, field, source); !s.ok()) return s;
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
      break;
    case AttentionBias::kRelativeBuckets:
      if (absl::Status s = ReadPositiveInt(j, keys.relative_attention_buckets, false,
                                           &config.relative_attention_buckets, source);
          !s.ok()) {
        return s;
      }
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
    absl::StatusOr<Activation> act =
        ParseActivation(j[keys.activation].get<std::string>(), keys.activation, source);
    if (!act.ok()) return act.status();
    config.activation = *act;
  }
  switch (recipe.norm_placement) {
    case NormPlacement::kPost:
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
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
      if (keys.position_embedding_type != nullptr && j.contains(keys.position_embedding_type) &&
          j[keys.position_embedding_type] != "absolute") {
        return ConfigError(
            source, absl::StrCat("unsupported ", keys.position_embedding_type, " ",
                                 j[keys.position_embedding_type].dump(), " (supported: absolute)"));
      }
      break;
  }
  if (config.hidden_size % config.num_heads != 0) {
    return ConfigError(source,
                       absl::StrCat("hidden_size ", config.hidden_size,
                                    " is not divisible by num_attention_heads ", config.num_heads));
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
  const Architecture* architecture = FindArchitecture(config.model_type);
  if (architecture == nullptr) architecture = &Architectures().front();
  const ConfigKeys& keys = architecture->keys;
  const Recipe& recipe = architecture->recipe;
  json j = {
      {"model_type", config.model_type},
      {"vocab_size", config.vocab_size},
      {keys.hidden_size, config.hidden_size},
      {keys.num_layers, config.num_layers},
      {keys.num_heads, config.num_heads},
      {keys.intermediate_size, config.intermediate_size},
      {keys.activation, config.activation == Activation::kGeluErf    ? "gelu"
                        : config.activation == Activation::kGeluTanh ? "gelu_new"
                                                                     : "relu"},
      {"max_position_embeddings", config.max_position_embeddings},
      {"pad_token_id", config.pad_token_id},
  };
  j["architectures"] = {ClassPrefix(*architecture, config.model_type) + "Model"};
  if (keys.layer_norm_eps != nullptr) j[keys.layer_norm_eps] = config.layer_norm_eps;
  if (keys.type_vocab_size != nullptr) j[keys.type_vocab_size] = config.type_vocab_size;
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
      if (keys.position_embedding_type != nullptr) j[keys.position_embedding_type] = "absolute";
      break;
  }
  if (recipe.embedding_projection && config.embedding_size > 0) {
    j[keys.embedding_size] = config.embedding_size;
  }
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
      break;
    case AttentionBias::kRelativeBuckets:
      j[keys.relative_attention_buckets] = config.relative_attention_buckets;
      break;
  }
  switch (recipe.norm_placement) {
    case NormPlacement::kPost:
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
