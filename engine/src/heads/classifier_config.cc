// The classifier's settings in config.json: id2label ({"0": "NEG", ...}),
// num_labels, problem_type, and the sentence-transformers CrossEncoder
// activation ("sentence_transformers": {"activation_fn": ...}, or the older
// top-level "sbert_ce_default_activation_function").
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

}  // namespace

absl::StatusOr<ClassifierConfig> ParseClassifierConfig(const std::string& json_text,
                                                       const std::string& source) {
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return HeadConfigError(source, "not a JSON object");
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
