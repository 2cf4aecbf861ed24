// The heads' settings in config.json. The classifier's labels and score
// activation: id2label ({"0": "NEG", ...}), num_labels, problem_type, and the
// sentence-transformers CrossEncoder activation ("sentence_transformers":
// {"activation_fn": ...}, or the older top-level
// "sbert_ce_default_activation_function"). Both heads' layer settings by the
// family's keys (ModernBERT's classifier_bias, norm_bias, decoder_bias,
// classifier_activation, classifier_pooling).
#include <initializer_list>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/model_files.h"
#include "heads/heads.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

using nlohmann::json;

absl::Status HeadConfigError(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// The torch module a CrossEncoder names as its activation; null: unknown.
const ScoreActivation* ActivationOfModule(const std::string& name) {
  static const std::map<std::string, ScoreActivation> kModules = {
      {"torch.nn.modules.linear.Identity", ScoreActivation::kIdentity},
      {"torch.nn.modules.activation.Sigmoid", ScoreActivation::kSigmoid},
  };
  const auto it = kModules.find(name);
  return it == kModules.end() ? nullptr : &it->second;
}

// The activation a head's names give where config.json does not say.
void DefaultActivation(HeadActivation activation, const ModelConfig& config,
                       HeadSettings* settings) {
  settings->tanh = activation == HeadActivation::kTanh;
  switch (activation) {
    case HeadActivation::kRelu:
      settings->activation = Activation::kRelu;
      return;
    case HeadActivation::kGeluErf:
      settings->activation = Activation::kGeluErf;
      return;
    case HeadActivation::kConfig:
    case HeadActivation::kTanh:  // `tanh` says it
      break;
  }
  settings->activation = config.activation;
}

// A transformers ACT2FN name under `key`, when the family has the key and
// config.json holds it.
absl::Status ReadHeadActivation(const json& j, const char* key, const std::string& source,
                                HeadSettings* settings) {
  if (key == nullptr || !j.contains(key)) return absl::OkStatus();
  static const std::map<std::string, Activation> kNames = {
      {"gelu", Activation::kGeluErf},
      {"gelu_new", Activation::kGeluTanh},
      {"gelu_pytorch_tanh", Activation::kGeluTanh},
      {"relu", Activation::kRelu},
      {"silu", Activation::kSilu},
      {"swish", Activation::kSilu},
  };
  const json& value = j[key];
  if (value == "tanh") {
    settings->tanh = true;
    return absl::OkStatus();
  }
  const auto it = value.is_string() ? kNames.find(value.get<std::string>()) : kNames.end();
  if (it == kNames.end()) {
    return HeadConfigError(source, absl::StrCat("unsupported \"", key, "\" ", value.dump(),
                                                " (supported: gelu, gelu_new, gelu_pytorch_tanh, "
                                                "relu, silu, swish, tanh)"));
  }
  settings->tanh = false;
  settings->activation = it->second;
  return absl::OkStatus();
}

// Whether a head's bias is in the checkpoint (HeadBias).
absl::Status ReadHeadBias(const json& j, const HeadBias& bias, const std::string& source,
                          bool* out) {
  *out = bias.key == nullptr || bias.fallback;
  if (bias.key == nullptr || !j.contains(bias.key)) return absl::OkStatus();
  if (!j[bias.key].is_boolean()) {
    return HeadConfigError(
        source, absl::StrCat("\"", bias.key, "\" must be true or false, got ", j[bias.key].dump()));
  }
  *out = j[bias.key].get<bool>();
  return absl::OkStatus();
}

absl::StatusOr<const json*> CheckObject(const json& j, const std::string& source) {
  if (!j.is_object()) return HeadConfigError(source, "not a JSON object");
  return &j;
}

// What every head reads: its activation and which of `biases` (the names'
// bias and the HeadSettings field it sets) the checkpoint has.
absl::Status ReadHeadCommon(
    const json& j, HeadActivation activation, const char* activation_key, const ModelConfig& config,
    std::initializer_list<std::pair<const HeadBias*, bool HeadSettings::*>> biases,
    const std::string& source, HeadSettings* settings) {
  DefaultActivation(activation, config, settings);
  RETURN_IF_ERROR(ReadHeadActivation(j, activation_key, source, settings));
  for (auto [bias, field] : biases) {
    RETURN_IF_ERROR(ReadHeadBias(j, *bias, source, &(settings->*field)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HeadSettings> ReadClassifierSettings(const ClassifierHeadNames& names,
                                                    const ModelConfig& config,
                                                    const json& config_json,
                                                    const std::string& source) {
  ASSIGN_OR_RETURN(const json* j, CheckObject(config_json, source));
  HeadSettings settings;
  RETURN_IF_ERROR(ReadHeadCommon(*j, names.activation, names.activation_key, config,
                                 {{&names.dense_bias, &HeadSettings::dense_bias},
                                  {&names.norm_bias, &HeadSettings::norm_bias}},
                                 source, &settings));
  settings.pooling = names.pooling;
  const char* key = names.pooling_key;
  if (key != nullptr && j->contains(key)) {
    const json& value = (*j)[key];
    if (value == "cls") {
      settings.pooling = HeadPooling::kFirstToken;
    } else if (value == "mean") {
      settings.pooling = HeadPooling::kMean;
    } else {
      return HeadConfigError(source, absl::StrCat("unsupported \"", key, "\" ", value.dump(),
                                                  " (supported: \"cls\", \"mean\")"));
    }
  }
  return settings;
}

absl::StatusOr<HeadSettings> ReadMaskedLmSettings(const MaskedLmHeadNames& names,
                                                  const ModelConfig& config,
                                                  const json& config_json,
                                                  const std::string& source) {
  ASSIGN_OR_RETURN(const json* j, CheckObject(config_json, source));
  HeadSettings settings;
  RETURN_IF_ERROR(ReadHeadCommon(*j, names.activation, names.activation_key, config,
                                 {{&names.transform_bias, &HeadSettings::dense_bias},
                                  {&names.norm_bias, &HeadSettings::norm_bias},
                                  {&names.output_bias, &HeadSettings::output_bias}},
                                 source, &settings));
  return settings;
}

absl::StatusOr<ClassifierConfig> ParseClassifierConfig(const json& config_json,
                                                       const std::string& source) {
  ASSIGN_OR_RETURN(const json* parsed, CheckObject(config_json, source));
  const json& j = *parsed;
  ClassifierConfig config;
  ClassifierHead& head = config.head;
  if (j.contains("id2label")) {
    const json& map = j["id2label"];
    if (!map.is_object()) return HeadConfigError(source, "\"id2label\" must be an object");
    std::map<int, std::string> labels;
    for (const auto& [key, value] : map.items()) {
      int id = -1;
      if (!absl::SimpleAtoi(key, &id) || id < 0 || id >= static_cast<int>(map.size()) ||
          !value.is_string()) {
        return HeadConfigError(source,
                               absl::StrCat("\"id2label\": entry \"", key, "\": ", value.dump(),
                                            " (expected ids 0..n-1 and string labels)"));
      }
      labels[id] = value.get<std::string>();
    }
    for (const auto& [id, label] : labels) head.labels.push_back(label);
    head.num_labels = static_cast<int>(head.labels.size());
  } else if (j.contains("num_labels")) {
    const json& v = j["num_labels"];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 20)) {
      return HeadConfigError(
          source, absl::StrCat("\"num_labels\" must be a positive integer, got ", v.dump()));
    }
    head.num_labels = v.get<int>();
    for (int i = 0; i < head.num_labels; ++i) head.labels.push_back(absl::StrCat("LABEL_", i));
  }
  config.multi_label =
      j.contains("problem_type") && j["problem_type"] == "multi_label_classification";
  head.activation = config.DefaultActivation(head.num_labels);
  // The CrossEncoder's own setting wins; the newer key over the older one.
  std::string key;
  const json* module = nullptr;
  if (j.contains("sentence_transformers") && j["sentence_transformers"].is_object() &&
      j["sentence_transformers"].contains("activation_fn")) {
    key = "sentence_transformers.activation_fn";
    module = &j["sentence_transformers"]["activation_fn"];
  } else if (j.contains("sbert_ce_default_activation_function")) {
    key = "sbert_ce_default_activation_function";
    module = &j["sbert_ce_default_activation_function"];
  }
  if (module != nullptr && !module->is_null()) {
    const ScoreActivation* activation =
        module->is_string() ? ActivationOfModule(module->get<std::string>()) : nullptr;
    if (activation == nullptr) {
      return HeadConfigError(source,
                             absl::StrCat("unsupported \"", key, "\" ", module->dump(),
                                          " (supported: torch.nn.modules.activation.Sigmoid, "
                                          "torch.nn.modules.linear.Identity)"));
    }
    head.activation = *activation;
    config.activation_set = true;
  }
  return config;
}

}  // namespace engine
