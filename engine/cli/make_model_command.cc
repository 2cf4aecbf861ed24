#include <fstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "common/status_macros.h"
#include "engine/tools/random_model.h"
#include "families/architecture.h"

namespace cli {

absl::Status RunMakeModel(const MakeModelOptions& options, std::ostream& out) {
  if (options.out.empty()) return absl::InvalidArgumentError("--out is required");
  engine::RandomModelSpec spec;
  spec.seed = options.seed;
  if (!options.model_type.empty()) {
    // A model_type, or a family's name where families share one ("jina_bert").
    const engine::Architecture* architecture = engine::FindArchitecture(options.model_type);
    std::string model_type = options.model_type;
    if (architecture == nullptr) {
      architecture = engine::ArchitectureNamed(options.model_type);
      if (architecture != nullptr) model_type = architecture->model_types.front().name;
    }
    if (architecture == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--model-type must be one of ",
                                                     engine::SupportedModelTypes(),
                                                     " (or a family's name: jina_bert)"));
    }
    spec.config = engine::FamilyDefaults(*architecture, model_type);
  }
  engine::ModelConfig& c = spec.config;
  const engine::Architecture& architecture = engine::ArchitectureOf(c);
  c.hidden_size = options.hidden;
  c.num_layers = options.layers;
  c.num_heads = options.heads;
  c.intermediate_size = options.intermediate;
  for (auto [value, key, field, flag] :
       {std::tuple<int, const char*, int*, const char*>{
            options.kv_heads, architecture.keys.num_kv_heads, &c.num_kv_heads, "--kv-heads"},
        {options.head_dim, architecture.keys.head_dim, &c.head_dim, "--head-dim"}}) {
    if (value == 0) continue;
    if (key == nullptr || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " needs a positive value and a family with it (", c.model_type, " has none)"));
    }
    *field = value;
  }
  if (!options.attention.empty()) {
    if (architecture.recipe.mask != engine::AttentionMask::kFromConfig) {
      return absl::InvalidArgumentError(
          absl::StrCat("--attention: ", c.model_type, "'s attention is fixed"));
    }
    if (options.attention != "bidirectional" && options.attention != "causal") {
      return absl::InvalidArgumentError("--attention must be bidirectional or causal");
    }
    c.causal = options.attention == "causal";
  }
  if (architecture.recipe.attention == engine::AttentionPattern::kLayerTypes) {
    // The family's default layer pattern and window (Gemma 3: five sliding
    // layers, then a full one).
    const engine::ConfigDefaults& d = architecture.defaults;
    engine::SetLayerTypes(d.sliding_pattern, d.sliding_window, &c);
  }
  c.max_position_embeddings = options.max_position;
  if (c.position_ids == engine::PositionIds::kAfterPadding) {
    // Positions 0 .. pad are never a real token's (roberta-base: 514 rows for 512).
    c.max_position_embeddings += c.pad_token_id + 1;
  }
  // Empty: the family's own.
  if (options.layer_norm == "pre") {
    c.layer_norm_placement = engine::LayerNormPlacement::kPre;
  } else if (options.layer_norm == "post") {
    c.layer_norm_placement = engine::LayerNormPlacement::kPost;
  } else if (!options.layer_norm.empty()) {
    return absl::InvalidArgumentError("--layer-norm must be pre or post");
  }
  if (options.hidden_act == "gelu") {
    c.activation = engine::Activation::kGeluErf;
  } else if (options.hidden_act == "gelu_new") {
    c.activation = engine::Activation::kGeluTanh;
  } else if (options.hidden_act == "relu") {
    c.activation = engine::Activation::kRelu;
  } else if (options.hidden_act == "silu") {
    c.activation = engine::Activation::kSilu;
  } else if (!options.hidden_act.empty()) {
    return absl::InvalidArgumentError("--hidden-act must be gelu, gelu_new, relu or silu");
  }
  if (options.head == "classifier") {
    spec.head = engine::RandomHead::kClassifier;
    spec.num_labels = options.labels;
    if (options.labels <= 0) return absl::InvalidArgumentError("--labels must be positive");
  } else if (options.head == "masked-lm") {
    spec.head = engine::RandomHead::kMaskedLm;
  } else if (options.head == "causal-lm") {
    spec.head = engine::RandomHead::kCausalLm;
  } else if (!options.head.empty()) {
    return absl::InvalidArgumentError("--head must be classifier, masked-lm or causal-lm");
  }
  if (!options.vocab_file.empty()) {
    std::ifstream in(options.vocab_file);
    if (!in) return absl::NotFoundError(absl::StrCat(options.vocab_file, ": cannot open"));
    std::string token;
    while (std::getline(in, token)) {
      if (!token.empty() && token.back() == '\r') token.pop_back();
      spec.vocabulary.push_back(token);
    }
    if (spec.vocabulary.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(options.vocab_file, ": empty vocabulary"));
    }
  }
  if (options.vocab_size > 0) {
    if (spec.vocabulary.empty()) spec.vocabulary = engine::DemoVocabulary();
    for (int i = static_cast<int>(spec.vocabulary.size()); i < options.vocab_size; ++i) {
      spec.vocabulary.push_back(absl::StrCat("[unused", i, "]"));
    }
  }
  RETURN_IF_ERROR(engine::WriteRandomModel(options.out, spec));
  out << "wrote " << options.out << " (hidden " << c.hidden_size << ", layers " << c.num_layers
      << ", heads " << c.num_heads << ", intermediate " << c.intermediate_size << ", "
      << engine::LayerNormPlacementName(c.layer_norm_placement) << "-LN";
  if (spec.head == engine::RandomHead::kClassifier) {
    out << ", classifier head with " << spec.num_labels << " label"
        << (spec.num_labels == 1 ? "" : "s");
  } else if (spec.head == engine::RandomHead::kMaskedLm) {
    out << ", masked-LM head";
  } else if (spec.head == engine::RandomHead::kCausalLm) {
    out << ", causal LM with tied head (a yes/no reranker with a tokenizer that has them)";
  }
  out << ")\n";
  return absl::OkStatus();
}

}  // namespace cli
