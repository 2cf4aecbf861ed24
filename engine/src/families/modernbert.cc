// ModernBERT (modernbert-embed, gte-modernbert, gte-reranker-modernbert):
// word embeddings and a norm, pre-LN with no norm before layer 0's
// attention and a final norm, fused Wqkv, rotary positions with one theta
// for global layers and another for the sliding-window layers (every
// global_attn_every_n_layers-th layer from 0 is global, the others see
// |i - j| <= local_attention / 2), GeGLU Wo(act(input) * gate) with
// Wi = [input; gate], and no biases in the released checkpoints
// (attention_bias, mlp_bias, norm_bias). Task models prefix "model.".
// Heads: ModernBertPredictionHead `head` = norm(act(dense(x))), dense's bias
// per classifier_bias, act classifier_activation, norm's per norm_bias;
// ModernBertForSequenceClassification: classifier(head(pooled)) with the
// first token or the mean (classifier_pooling); ModernBertForMaskedLM:
// decoder(head(h)), decoder tied to tok_embeddings, its bias per
// decoder_bias.
#include "families/architecture.h"

namespace engine {

Architecture ModernBertArchitecture() {
  Architecture a;
  a.name = "modernbert";
  a.model_types = {{"modernbert", "ModernBert"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kRotary;
  r.norm_placement = NormPlacement::kPre;
  r.first_attention_norm = false;
  r.qkv = QkvLayout::kFused;
  r.feed_forward = FeedForward::kGatedFused;
  r.gate_half = GateHalf::kFirst;
  r.biases = {false, false, false, false};
  r.attention = AttentionPattern::kAlternating;
  ConfigKeys& k = a.keys;
  k.activation = "hidden_activation";
  k.layer_norm_eps = "norm_eps";
  k.type_vocab_size = nullptr;
  k.position_embedding_type = nullptr;
  k.rotary_base = "global_rope_theta";
  k.rotary_local_base = "local_rope_theta";
  k.local_attention = "local_attention";
  k.global_every_n = "global_attn_every_n_layers";
  k.attention_bias = "attention_bias";
  k.ffn_in_bias = "mlp_bias";
  k.ffn_out_bias = "mlp_bias";
  k.norm_bias = "norm_bias";
  // ModernBertConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d.max_position_embeddings = 8192;
  d.type_vocab_size = 0;
  d.pad_token_id = 50283;
  d.layer_norm_eps = 1e-5f;
  d.activation = Activation::kGeluErf;
  d.rotary_base = 160000;
  d.rotary_local_base = 10000;
  d.local_attention = 128;
  d.global_every_n = 3;
  TensorNames& n = a.names;
  n.task_prefixes = {"model."};
  n.word_embeddings = "embeddings.tok_embeddings";
  n.embeddings_norm = "embeddings.norm";
  n.layer_prefix = "layers.";
  n.layer.qkv = "attn.Wqkv";
  n.layer.attention_out = "attn.Wo";
  n.layer.attention_norm = "attn_norm";
  n.layer.ffn_in = "mlp.Wi";
  n.layer.ffn_out = "mlp.Wo";
  n.layer.ffn_norm = "mlp_norm";
  n.final_norm = "final_norm";
  // ModernBertConfig's defaults: classifier_bias false, classifier_activation
  // "gelu", classifier_pooling "cls", norm_bias false, decoder_bias true.
  const HeadBias dense_bias = {"classifier_bias", false};
  const HeadBias norm_bias = {"norm_bias", false};
  ClassifierHeadNames& c = n.classifier;
  c.dense = "head.dense";
  c.activation = HeadActivation::kGeluErf;
  c.activation_key = "classifier_activation";
  c.norm = "head.norm";
  c.dense_bias = dense_bias;
  c.norm_bias = norm_bias;
  c.out = "classifier";
  c.pooling_key = "classifier_pooling";
  c.pooling = HeadPooling::kFirstToken;
  MaskedLmHeadNames& m = n.masked_lm;
  m.transform = "head.dense";
  m.activation = HeadActivation::kGeluErf;
  m.activation_key = "classifier_activation";
  m.norm = "head.norm";
  m.decoder = "decoder";
  m.bias = {"decoder.bias"};
  m.transform_bias = dense_bias;
  m.norm_bias = norm_bias;
  m.output_bias = {"decoder_bias", true};
  m.classifier_out = c.out;
  return a;
}

}  // namespace engine
