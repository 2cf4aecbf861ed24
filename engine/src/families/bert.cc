// BERT (bert-base, MiniLM, bge, e5, gte-base ...): learned absolute
// positions from 0, two token types, post-LN, GELU (erf) FFN, separate
// Q/K/V with biases, global attention; the project's own pre-LN models say
// "layer_norm_placement": "pre" in config.json and add encoder.LayerNorm.
// Heads: the pooler + classifier, cls.predictions for masked-LM. The first
// family of the registry: the default of make-model and DefaultModelConfig.
#include "families/architecture.h"

namespace engine {

Recipe BertRecipe() {
  Recipe r;
  r.positions = PositionScheme::kLearnedAbsolute;
  r.position_ids = PositionIds::kFromZero;
  r.attention_bias = AttentionBias::kNone;
  r.norm_placement = NormPlacement::kPost;
  r.feed_forward = FeedForward::kDense;
  r.qkv = QkvLayout::kSeparate;
  r.attention = AttentionPattern::kGlobal;
  r.embedding_projection = false;
  return r;
}

// BertConfig's defaults.
ConfigDefaults BertConfigDefaults() {
  ConfigDefaults d;
  d.max_position_embeddings = 512;
  d.type_vocab_size = 2;
  d.pad_token_id = 0;
  d.layer_norm_eps = 1e-12f;
  d.activation = Activation::kGeluErf;
  return d;
}

LayerTensorNames BertLayerTensorNames() {
  LayerTensorNames n;
  n.query = "attention.self.query";
  n.key = "attention.self.key";
  n.value = "attention.self.value";
  n.attention_out = "attention.output.dense";
  n.attention_norm = "attention.output.LayerNorm";
  n.ffn_in = "intermediate.dense";
  n.ffn_out = "output.dense";
  n.ffn_norm = "output.LayerNorm";
  return n;
}

TensorNames BertTensorNames() {
  TensorNames n;
  n.word_embeddings = "embeddings.word_embeddings";
  n.position_embeddings = "embeddings.position_embeddings";
  n.token_type_embeddings = "embeddings.token_type_embeddings";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer_prefix = "encoder.layer.";
  n.layer = BertLayerTensorNames();
  n.pooler = "pooler.dense";
  return n;
}

Architecture BertArchitecture() {
  Architecture a;
  a.name = "bert";
  a.model_types = {{"bert", "Bert"}};
  a.recipe = BertRecipe();
  a.recipe.norm_placement = NormPlacement::kFromConfig;
  a.keys.layer_norm_placement = "layer_norm_placement";
  // BertModel with is_decoder attends causally; served bidirectional only.
  a.keys.served_only = {{"is_decoder", "false"}};
  a.defaults = BertConfigDefaults();
  a.names = BertTensorNames();
  a.names.final_norm = "encoder.LayerNorm";
  a.names.task_prefixes = {"bert."};
  // BertForSequenceClassification: the pooler (tanh), then classifier.
  a.names.classifier = {"pooler.dense", HeadActivation::kTanh, "classifier"};
  // BertForMaskedLM: cls.predictions, the transform activated by hidden_act.
  a.names.masked_lm = {"cls.predictions.transform.dense",
                       HeadActivation::kConfig,
                       "cls.predictions.transform.LayerNorm",
                       "cls.predictions.decoder",
                       {"cls.predictions.bias", "cls.predictions.decoder.bias"}};
  return a;
}

}  // namespace engine
