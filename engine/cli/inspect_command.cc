#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "engine/model_directory.h"
#include "families/architecture.h"
#include "heads/heads.h"
#include "io/checkpoint.h"
#include "nlohmann/json.hpp"

namespace cli {

absl::Status RunInspect(const CommonOptions& common, std::ostream& out) {
  const std::string config_path =
      (std::filesystem::path(common.model_dir) / "config.json").string();
  absl::StatusOr<std::unique_ptr<engine::ModelDirectory>> directory =
      engine::ModelDirectory::Open(common.model_dir);
  if (!directory.ok()) return directory.status();
  absl::StatusOr<const nlohmann::json*> config_json = (*directory)->Json("config.json");
  if (!config_json.ok()) return config_json.status();
  absl::StatusOr<engine::ModelConfig> config = engine::ReadModelConfig(**config_json, config_path);
  if (!config.ok()) return config.status();
  const engine::Architecture& architecture = engine::ArchitectureOf(*config);
  absl::StatusOr<std::unique_ptr<engine::Checkpoint>> checkpoint =
      engine::Checkpoint::Open(**directory, architecture.names.task_prefixes);
  if (!checkpoint.ok()) return checkpoint.status();

  out << "config: " << config_path << "\n"
      << "  model_type               " << config->model_type << "\n"
      << "  architecture             " << config->architecture << "\n"
      << "  hidden_size              " << config->hidden_size << "\n"
      << "  num_hidden_layers        " << config->num_layers << "\n"
      << "  num_attention_heads      " << config->num_heads << "\n"
      << "  intermediate_size        " << config->intermediate_size << "\n"
      << "  vocab_size               " << config->vocab_size << "\n"
      << "  max_position_embeddings  " << config->max_position_embeddings << "\n"
      << "  max_length               " << config->max_length() << "\n"
      << "  position_ids             "
      << (config->position_ids == engine::PositionIds::kAfterPadding ? "after pad_token_id"
                                                                     : "from 0")
      << "\n"
      << "  type_vocab_size          " << config->type_vocab_size << "\n"
      << "  embedding_size           " << config->embedding_width() << "\n"
      << "  relative_attention_buckets " << config->relative_attention_buckets << "\n"
      << "  hidden_act               " << engine::ActivationName(config->activation) << "\n"
      << "  layer_norm_eps           " << config->layer_norm_eps << "\n"
      << "  layer_norm_placement     "
      << engine::LayerNormPlacementName(config->layer_norm_placement) << "\n";
  // The long-context recipes' parts, where the family has them.
  if (config->position_embedding == engine::PositionEmbedding::kRotary) {
    const engine::RotaryConfig& r = config->rotary;
    out << "  rotary                   base " << r.base;
    if (config->local_rotary_base > 0) out << " (local layers " << config->local_rotary_base << ")";
    out << ", " << (r.dims > 0 ? r.dims : config->head_size()) << " dims of " << config->head_size()
        << (r.interleaved ? ", interleaved" : ", rotate_half");
    if (r.ntk_factor > 0) out << ", NTK x" << r.ntk_factor;
    out << "\n";
  }
  if (config->alibi) out << "  alibi                    yes\n";
  if (config->local_window > 0 && config->sliding_layers.empty()) {
    out << "  sliding window           +-" << config->local_window << " tokens, global every "
        << config->global_every_n << " layers\n";
  }
  // The decoder families' parts.
  if (config->kv_heads() != config->num_heads || config->head_dim > 0) {
    out << "  attention heads          " << config->num_heads << " query, " << config->kv_heads()
        << " key/value, " << config->head_size() << " wide";
    if (config->attention_scale_base > 0) {
      out << ", scores / sqrt(" << config->attention_scale_base << ")";
    }
    out << "\n";
  }
  if (config->causal) out << "  attention mask           causal\n";
  if (!config->sliding_layers.empty()) {
    int sliding = 0;
    for (bool s : config->sliding_layers) sliding += s ? 1 : 0;
    out << "  sliding window           " << (config->causal ? "-" : "+-") << config->local_window
        << " tokens in " << sliding << " of " << config->num_layers << " layers\n";
  }
  if (config->rms_norm) {
    out << "  norms                    RMSNorm" << (config->qk_norm ? ", per-head Q/K norms" : "")
        << (config->sublayer_output_norm ? ", sublayer output norms" : "") << "\n";
  }
  if (config->embedding_scale > 0) {
    out << "  embedding scale          x" << config->embedding_scale << "\n";
  }
  const engine::CausalLmScorerNames& lm = architecture.names.causal_lm;
  if (!lm.task_prefix.empty() && (*checkpoint)->SavedWithPrefix(lm.task_prefix)) {
    out << "  causal-LM scorer         logit(\"" << lm.positive_token << "\") - logit(\""
        << lm.negative_token << "\") at the last token, in the family's rerank prompt\n";
  }
  if (config->gated_ffn) out << "  feed_forward             gated (act(gate) * up)\n";
  const engine::Checkpoint& c = **checkpoint;
  const engine::ClassifierHeadNames& cn = architecture.names.classifier;
  out << "  classifier               ";
  if (engine::HasClassifier(c, cn)) {
    absl::StatusOr<engine::ClassifierConfig> classifier =
        engine::ParseClassifierConfig(**config_json, config_path);
    if (!classifier.ok()) return classifier.status();
    absl::StatusOr<engine::HeadSettings> settings =
        engine::ReadClassifierSettings(cn, *config, **config_json, config_path);
    if (!settings.ok()) return settings.status();
    const engine::ClassifierHead& head = classifier->head;
    out << cn.dense << (cn.norm.empty() ? "" : " + ") << cn.norm << " + " << cn.out
        << (settings->pooling == engine::HeadPooling::kMean ? " on the mean of the tokens" : "")
        << "; ";
    if (head.num_labels > 0) {
      out << head.num_labels << " labels (" << absl::StrJoin(head.labels, ", ") << "), "
          << engine::ScoreActivationName(head.activation);
    } else {
      out << "labels from the weight";
    }
    out << "\n";
  } else {
    out << "none\n";
  }
  const engine::MaskedLmHeadNames& mn = architecture.names.masked_lm;
  bool has_masked_lm = false;
  if (!mn.transform.empty() && c.Has(mn.transform + ".weight")) {
    absl::StatusOr<engine::HeadSettings> settings =
        engine::ReadMaskedLmSettings(mn, *config, **config_json, config_path);
    if (!settings.ok()) return settings.status();
    has_masked_lm = engine::HasMaskedLm(c, mn, settings->output_bias);
  }
  out << "  masked_lm_head           ";
  if (has_masked_lm) {
    out << mn.transform << " ... " << mn.decoder << " ("
        << (c.Has(mn.decoder + ".weight") ? "own decoder weight"
                                          : "decoder tied to the word embeddings")
        << ")\n";
  } else {
    out << "none\n";
  }
  out << "files:\n";
  for (const std::string& file : (*checkpoint)->files()) out << "  " << file << "\n";
  int64_t parameters = 0;
  out << "tensors (" << (*checkpoint)->entries().size() << "):\n";
  for (const auto& [name, entry] : (*checkpoint)->entries()) {
    parameters += entry.view->num_elements();
    out << "  " << name << "  " << engine::DTypeName(entry.view->dtype) << " "
        << engine::ShapeString(entry.view->shape);
    if (entry.view->name != name) out << "  (stored as " << entry.view->name << ")";
    out << "\n";
  }
  out << "parameters: " << parameters << "\n";
  return absl::OkStatus();
}

}  // namespace cli
