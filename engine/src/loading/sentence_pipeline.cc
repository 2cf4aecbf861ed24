#include "engine/sentence_pipeline.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "io/safetensors.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

using nlohmann::json;

// `file` in module folder `folder` ("" the model's own), as ModelDirectory names it.
std::string InFolder(const std::string& folder, const std::string& file) {
  return folder.empty() ? file : absl::StrCat(folder, "/", file);
}

// The directory's JSON object `name`; NotFound when it is not listed (a
// dangling symlink is: reading it then fails, naming where it points).
absl::StatusOr<const json*> ReadJsonObject(ModelDirectory& directory, const std::string& name) {
  if (!directory.Has(name)) {
    return absl::NotFoundError(absl::StrCat(directory.PathOf(name), ": missing"));
  }
  return directory.JsonObject(name);
}

constexpr const char* kModulesFile = "modules.json";
constexpr const char* kSentenceTransformersConfig = "config_sentence_transformers.json";
// Without modules.json: the folder sentence-transformers would have written.
constexpr const char* kPoolingConfig = "1_Pooling/config.json";
constexpr const char* kModuleTransformer = "sentence_transformers.models.Transformer";
constexpr const char* kModulePooling = "sentence_transformers.models.Pooling";
constexpr const char* kModuleDense = "sentence_transformers.models.Dense";
constexpr const char* kModuleNormalize = "sentence_transformers.models.Normalize";
// Python's string.punctuation: PyLate's default skiplist, colbert-ir's
// mask_punctuation.
constexpr const char* kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
// colbert-ir's ColBERTConfig beside an HF_ColBERT checkpoint.
constexpr const char* kColbertMetadataFile = "artifact.metadata";
// PyLate's projection of every token's state (a ColBERT model).
constexpr const char* kModulePylateDense = "pylate.models.Dense.Dense";
constexpr const char* kModuleMlmTransformer =
    "sentence_transformers.sparse_encoder.models.MLMTransformer";
constexpr const char* kModuleSpladePooling =
    "sentence_transformers.sparse_encoder.models.SpladePooling";

// sentence-transformers' concatenation order and config keys.
struct ModeKey {
  const char* key;
  const char* short_name;
  Pooling pooling;
};
constexpr ModeKey kModeKeys[] = {
    {"pooling_mode_cls_token", "cls", Pooling::kCls},
    {"pooling_mode_max_tokens", "max", Pooling::kMax},
    {"pooling_mode_mean_tokens", "mean", Pooling::kMean},
    {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens", Pooling::kMeanSqrtLen},
    {"pooling_mode_weightedmean_tokens", "weightedmean", Pooling::kWeightedMean},
    {"pooling_mode_lasttoken", "lasttoken", Pooling::kLastToken},
};

absl::StatusOr<std::vector<Pooling>> PoolingModesOf(const json& config, const std::string& path,
                                                    bool* include_prompt) {
  std::vector<bool> chosen(std::size(kModeKeys), false);
  if (const auto mode = config.find("pooling_mode"); mode != config.end() && !mode->is_null()) {
    // The newer layout: "pooling_mode": "mean" or ["cls", "mean"].
    std::vector<json> names =
        mode->is_array() ? mode->get<std::vector<json>>() : std::vector<json>{*mode};
    for (const json& name : names) {
      bool known = false;
      for (size_t i = 0; i < std::size(kModeKeys); ++i) {
        if (name.is_string() &&
            (name == kModeKeys[i].short_name || name == PoolingName(kModeKeys[i].pooling))) {
          chosen[i] = true;
          known = true;
        }
      }
      if (!known) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": unknown pooling_mode ", name.dump()));
      }
    }
  } else {
    for (size_t i = 0; i < std::size(kModeKeys); ++i) {
      const auto value = config.find(kModeKeys[i].key);
      if (value == config.end() || value->is_null()) continue;
      if (!value->is_boolean()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": \"", kModeKeys[i].key, "\" is not a boolean"));
      }
      chosen[i] = value->get<bool>();
    }
  }
  for (const auto& [key, value] : config.items()) {
    if (key.rfind("pooling_mode_", 0) != 0 || !value.is_boolean() || !value.get<bool>()) continue;
    bool known = false;
    for (const ModeKey& mode : kModeKeys) known = known || key == mode.key;
    if (!known) {
      return absl::UnimplementedError(
          absl::StrCat(path, ": pooling mode \"", key, "\" is not supported"));
    }
  }
  std::vector<Pooling> modes;
  for (size_t i = 0; i < std::size(kModeKeys); ++i) {
    if (chosen[i]) modes.push_back(kModeKeys[i].pooling);
  }
  if (modes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no pooling mode is chosen"));
  }
  *include_prompt = true;
  if (const auto found = config.find("include_prompt");
      found != config.end() && !found->is_null()) {
    if (!found->is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": \"include_prompt\" is not a boolean"));
    }
    *include_prompt = found->get<bool>();
  }
  return modes;
}

absl::StatusOr<ModuleActivation> ParseActivation(const std::string& name, const std::string& path) {
  const std::string prefix = "torch.nn.modules.activation.";
  const std::string base = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
  if (base == "Identity" || base == "torch.nn.modules.linear.Identity") {
    return ModuleActivation::kIdentity;
  }
  if (base == "Tanh") return ModuleActivation::kTanh;
  if (base == "ReLU") return ModuleActivation::kReLU;
  if (base == "Sigmoid") return ModuleActivation::kSigmoid;
  if (base == "GELU") return ModuleActivation::kGelu;
  return absl::UnimplementedError(
      absl::StrCat(path, ": activation_function \"", name, "\" is not supported"));
}

absl::StatusOr<int> PositiveInt(const json& config, const char* key, const std::string& path) {
  const auto found = config.find(key);
  if (found == config.end() || !found->is_number_integer() || found->get<int64_t>() <= 0 ||
      found->get<int64_t>() > (1 << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" is missing or not a positive integer"));
  }
  return found->get<int>();
}

absl::StatusOr<DenseLayer> ReadDense(ModelDirectory& directory, const std::string& name) {
  const std::string config_path = directory.PathOf(InFolder(name, "config.json"));
  ASSIGN_OR_RETURN(const json* config, ReadJsonObject(directory, InFolder(name, "config.json")));
  const std::string folder = directory.PathOf(name);
  DenseLayer layer;
  layer.directory = name;
  absl::StatusOr<int> in = PositiveInt(*config, "in_features", config_path);
  if (!in.ok()) return in.status();
  absl::StatusOr<int> out = PositiveInt(*config, "out_features", config_path);
  if (!out.ok()) return out.status();
  layer.in_features = *in;
  layer.out_features = *out;
  bool has_bias = true;
  if (const auto bias = config->find("bias"); bias != config->end() && bias->is_boolean()) {
    has_bias = bias->get<bool>();
  }
  if (const auto act = config->find("activation_function");
      act != config->end() && !act->is_null()) {
    if (!act->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config_path, ": \"activation_function\" is not a string"));
    }
    absl::StatusOr<ModuleActivation> activation =
        ParseActivation(act->get<std::string>(), config_path);
    if (!activation.ok()) return activation.status();
    layer.activation = *activation;
  } else {
    layer.activation = ModuleActivation::kTanh;  // sentence-transformers' default
  }

  const std::string weights_name = InFolder(name, "model.safetensors");
  const std::string weights_path = directory.PathOf(weights_name);
  if (!directory.Has(weights_name)) {
    if (directory.Has(InFolder(name, "pytorch_model.bin"))) {
      return absl::UnimplementedError(absl::StrCat(
          folder, "/pytorch_model.bin: the Dense weights must be in model.safetensors (",
          weights_path, "); convert the file to safetensors"));
    }
    return absl::NotFoundError(absl::StrCat(weights_path, ": missing (the Dense weights)"));
  }
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(directory.Map(weights_name));
  if (!file.ok()) return file.status();
  const TensorView* weight = (*file)->Find("linear.weight");
  if (weight == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(weights_path, ": no tensor linear.weight"));
  }
  if (weight->shape != std::vector<int64_t>{layer.out_features, layer.in_features} ||
      weight->dtype == DType::kI32 || weight->dtype == DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(weights_path, ": linear.weight is not a float tensor of shape [",
                     layer.out_features, ", ", layer.in_features, "]"));
  }
  layer.weight.resize(static_cast<size_t>(weight->num_elements()));
  ConvertToFloat(*weight, layer.weight.data());
  const TensorView* bias = (*file)->Find("linear.bias");
  if (has_bias) {
    if (bias == nullptr || bias->shape != std::vector<int64_t>{layer.out_features} ||
        bias->dtype == DType::kI32 || bias->dtype == DType::kI64) {
      return absl::InvalidArgumentError(absl::StrCat(
          weights_path, ": no float tensor linear.bias of shape [", layer.out_features, "]"));
    }
    layer.bias.resize(static_cast<size_t>(bias->num_elements()));
    ConvertToFloat(*bias, layer.bias.data());
  }
  return layer;
}

// sentence-transformers' SpladePooling: pooling_strategy "max" (default) or
// "sum" over the tokens of log1p(relu(logit)) for activation_function "relu"
// (the default). "log1p_relu" takes log1p twice, which the engine does not
// implement; chunk_size and word_embedding_dimension change nothing served.
absl::Status ReadSplade(ModelDirectory& directory, const std::string& folder,
                        SparseOptions* options) {
  const std::string path = directory.PathOf(InFolder(folder, "config.json"));
  ASSIGN_OR_RETURN(const json* config, ReadJsonObject(directory, InFolder(folder, "config.json")));
  const auto refuse = [&path](const char* key, const json& value, const char* supported) {
    return absl::UnimplementedError(absl::StrCat(path, ": unsupported ", key, " ", value.dump(),
                                                 " (supported: ", supported, ")"));
  };
  options->pooling = SparsePooling::kMax;
  if (const auto found = config->find("pooling_strategy");
      found != config->end() && !found->is_null()) {
    if (*found == "sum") {
      options->pooling = SparsePooling::kSum;
    } else if (*found != "max") {
      return refuse("pooling_strategy", *found, "\"max\", \"sum\"");
    }
  }
  options->activation = SparseActivation::kLog1pRelu;
  if (const auto found = config->find("activation_function");
      found != config->end() && !found->is_null() && *found != "relu") {
    return refuse("activation_function", *found, "\"relu\": log1p(relu(x))");
  }
  return absl::OkStatus();
}

absl::Status ReadPrompts(ModelDirectory& directory, SentencePipeline* pipeline) {
  const std::string path = directory.PathOf(kSentenceTransformersConfig);
  ASSIGN_OR_RETURN(const json* config, directory.JsonObjectIfPresent(kSentenceTransformersConfig));
  if (config == nullptr) return absl::OkStatus();
  if (const auto found = config->find("prompts"); found != config->end() && !found->is_null()) {
    if (!found->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": \"prompts\" is not an object"));
    }
    for (const auto& [name, text] : found->items()) {
      if (!text.is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": prompt \"", name, "\" is not a string"));
      }
      pipeline->prompts[name] = text.get<std::string>();
    }
  }
  if (const auto found = config->find("default_prompt_name");
      found != config->end() && !found->is_null()) {
    if (!found->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": \"default_prompt_name\" is not a string"));
    }
    pipeline->default_prompt_name = found->get<std::string>();
    if (!pipeline->default_prompt_name.empty() &&
        pipeline->prompts.count(pipeline->default_prompt_name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": default_prompt_name \"",
                                                     pipeline->default_prompt_name,
                                                     "\" is not one of its prompts"));
    }
  }
  return absl::OkStatus();
}

// PyLate's ColBERT settings in config_sentence_transformers.json (read for a
// model with a token projection).
absl::Status ReadColbertSettings(ModelDirectory& directory, ColbertSettings* settings) {
  const std::string path = directory.PathOf(kSentenceTransformersConfig);
  ASSIGN_OR_RETURN(const json* config, directory.JsonObjectIfPresent(kSentenceTransformersConfig));
  if (config == nullptr) return absl::OkStatus();
  for (const auto& [key, value] : {std::pair{"query_prefix", &settings->query_prefix},
                                   std::pair{"document_prefix", &settings->document_prefix}}) {
    if (const auto found = config->find(key); found != config->end() && !found->is_null()) {
      if (!found->is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" is not a string"));
      }
      *value = found->get<std::string>();
    }
  }
  for (const auto& [key, value] : {std::pair{"query_length", &settings->query_length},
                                   std::pair{"document_length", &settings->document_length}}) {
    if (const auto found = config->find(key); found != config->end() && !found->is_null()) {
      absl::StatusOr<int> length = PositiveInt(*config, key, path);
      if (!length.ok()) return length.status();
      *value = *length;
    }
  }
  for (const auto& [key, value] :
       {std::pair{"do_query_expansion", &settings->do_query_expansion},
        std::pair{"attend_to_expansion_tokens", &settings->attend_to_expansion_tokens}}) {
    if (const auto found = config->find(key); found != config->end() && !found->is_null()) {
      if (!found->is_boolean()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" is not a boolean"));
      }
      *value = found->get<bool>();
    }
  }
  const auto skiplist = config->find("skiplist_words");
  if (skiplist == config->end() || skiplist->is_null()) {
    for (const char c : std::string_view(kPunctuation)) {
      settings->skiplist_words.emplace_back(1, c);
    }
  } else {
    const json* found = &*skiplist;
    if (!found->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": \"skiplist_words\" is not a list"));
    }
    for (const json& word : *found) {
      if (!word.is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": \"skiplist_words\" holds a value that is not a string"));
      }
      settings->skiplist_words.push_back(word.get<std::string>());
    }
  }
  return absl::OkStatus();
}

// colbert-ir's artifact.metadata (ColBERTConfig): [unused0] / [unused1] put
// where its tokenizers put their markers (after [CLS]), query_maxlen,
// doc_maxlen, attend_to_mask_tokens; punctuation skipped in documents when
// mask_punctuation (string.punctuation, PyLate's default too).
absl::StatusOr<ColbertSettings> ReadColbertMetadata(ModelDirectory& directory) {
  const std::string path = directory.PathOf(kColbertMetadataFile);
  ASSIGN_OR_RETURN(const json* config, ReadJsonObject(directory, kColbertMetadataFile));
  ColbertSettings settings;
  settings.query_prefix = "[unused0]";
  settings.document_prefix = "[unused1]";
  for (const auto& [key, value] : {std::pair{"query_maxlen", &settings.query_length},
                                   std::pair{"doc_maxlen", &settings.document_length}}) {
    if (const auto found = config->find(key); found != config->end() && !found->is_null()) {
      absl::StatusOr<int> length = PositiveInt(*config, key, path);
      if (!length.ok()) return length.status();
      *value = *length;
    }
  }
  for (const char* key : {"attend_to_mask_tokens", "mask_punctuation"}) {
    const auto found = config->find(key);
    if (found != config->end() && !found->is_null() && !found->is_boolean()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" is not a boolean"));
    }
  }
  const auto flag = [&config](const char* key, bool absent) {
    const auto found = config->find(key);
    return found == config->end() || found->is_null() ? absent : found->get<bool>();
  };
  settings.attend_to_expansion_tokens = flag("attend_to_mask_tokens", false);
  if (flag("mask_punctuation", true)) {
    for (const char c : std::string_view(kPunctuation)) settings.skiplist_words.emplace_back(1, c);
  }
  return settings;
}

absl::Status ReadModules(ModelDirectory& directory, SentencePipeline* pipeline) {
  const std::string path = directory.PathOf(kModulesFile);
  ASSIGN_OR_RETURN(const json* read, directory.Json(kModulesFile));
  const json& modules = *read;
  if (!modules.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON array of modules"));
  }
  pipeline->from_modules_json = true;
  for (const json& module : modules) {
    if (!module.is_object() || !module.contains("type") || !module["type"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": a module without a \"type\""));
    }
    const std::string type = module["type"].get<std::string>();
    const std::string sub = module.value("path", std::string());
    const std::string folder = directory.PathOf(sub);
    // Transformer's folder is the model's; Normalize has no files (hub
    // repositories often lack its folder).
    const bool needs_folder =
        type != kModuleTransformer && type != kModuleMlmTransformer && type != kModuleNormalize;
    const bool pylate_dense = type == kModulePylateDense || type == "pylate.models.Dense";
    if (needs_folder && !directory.HasFolder(sub)) {
      return absl::NotFoundError(absl::StrCat(path, ": module ", type, "'s folder \"", sub,
                                              "\" is missing (", folder, ")"));
    }
    if (type == kModuleTransformer) {
      continue;
    } else if (type == kModuleMlmTransformer) {
      pipeline->sparse = true;
    } else if (type == kModulePooling) {
      const std::string config_path = directory.PathOf(InFolder(sub, "config.json"));
      ASSIGN_OR_RETURN(const json* config, ReadJsonObject(directory, InFolder(sub, "config.json")));
      absl::StatusOr<std::vector<Pooling>> modes =
          PoolingModesOf(*config, config_path, &pipeline->include_prompt);
      if (!modes.ok()) return modes.status();
      pipeline->pooling = *std::move(modes);
    } else if (type == kModuleSpladePooling) {
      pipeline->sparse = true;
      RETURN_IF_ERROR(ReadSplade(directory, sub, &pipeline->sparse_options));
    } else if (type == kModuleDense) {
      absl::StatusOr<DenseLayer> layer = ReadDense(directory, sub);
      if (!layer.ok()) return layer.status();
      pipeline->dense.push_back(*std::move(layer));
    } else if (type == kModuleNormalize) {
      pipeline->normalize = true;
    } else if (pylate_dense) {
      if (pipeline->token_projection.has_value()) {
        return absl::UnimplementedError(
            absl::StrCat(path, ": more than one ", type, " (a ColBERT projection chain)"));
      }
      absl::StatusOr<DenseLayer> layer = ReadDense(directory, sub);
      if (!layer.ok()) return layer.status();
      if (layer->activation != ModuleActivation::kIdentity) {
        return absl::UnimplementedError(absl::StrCat(
            folder, "/config.json: a ColBERT projection with an activation is not supported"));
      }
      pipeline->token_projection = *std::move(layer);
    } else {
      return absl::UnimplementedError(
          absl::StrCat(path, ": module type \"", type, "\" is not supported"));
    }
  }
  // Without a Pooling module the fallback set by ReadSentencePipeline stays.
  return absl::OkStatus();
}

}  // namespace

int SentencePipeline::pooled_size(int hidden_size) const {
  return static_cast<int>(pooling.size()) * hidden_size;
}

int SentencePipeline::output_size(int hidden_size) const {
  return dense.empty() ? pooled_size(hidden_size) : dense.back().out_features;
}

std::string SentencePipeline::pooling_names() const {
  std::vector<std::string> names;
  for (Pooling mode : pooling) names.push_back(PoolingName(mode));
  return absl::StrJoin(names, "+");
}

absl::StatusOr<SentencePipeline> ReadSentencePipeline(const std::string& model_dir,
                                                      Pooling fallback) {
  ASSIGN_OR_RETURN(std::unique_ptr<ModelDirectory> directory, ModelDirectory::Open(model_dir));
  return ReadSentencePipeline(*directory, fallback);
}

absl::StatusOr<SentencePipeline> ReadSentencePipeline(ModelDirectory& directory, Pooling fallback) {
  const std::string& model_dir = directory.path();
  SentencePipeline pipeline;
  pipeline.pooling = {fallback};
  if (directory.Has(kModulesFile)) {
    RETURN_IF_ERROR(ReadModules(directory, &pipeline));
  } else if (directory.Has(kPoolingConfig)) {
    const std::string path = directory.PathOf(kPoolingConfig);
    ASSIGN_OR_RETURN(const json* config, ReadJsonObject(directory, kPoolingConfig));
    absl::StatusOr<std::vector<Pooling>> modes =
        PoolingModesOf(*config, path, &pipeline.include_prompt);
    if (!modes.ok()) return modes.status();
    pipeline.pooling = *std::move(modes);
  }
  // Dense layers must chain from the pooled size on.
  for (size_t i = 0; i < pipeline.dense.size(); ++i) {
    if (i > 0 && pipeline.dense[i].in_features != pipeline.dense[i - 1].out_features) {
      return absl::InvalidArgumentError(absl::StrCat(
          model_dir, "/", pipeline.dense[i].directory, "/config.json: in_features ",
          pipeline.dense[i].in_features, " does not match the previous Dense's out_features ",
          pipeline.dense[i - 1].out_features));
    }
  }
  RETURN_IF_ERROR(ReadPrompts(directory, &pipeline));
  if (pipeline.token_projection.has_value()) {
    pipeline.colbert.emplace();
    RETURN_IF_ERROR(ReadColbertSettings(directory, &*pipeline.colbert));
  } else if (directory.Has(kColbertMetadataFile)) {
    absl::StatusOr<ColbertSettings> settings = ReadColbertMetadata(directory);
    if (!settings.ok()) return settings.status();
    pipeline.colbert = *std::move(settings);
  }
  return pipeline;
}

}  // namespace engine
