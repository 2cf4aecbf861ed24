// NomicBert (nomic-embed-text-v1 / v1.5, model_type "nomic_bert"): BERT's
// embeddings without a position table (token types kept), rotary positions
// on Q and K (rotary_emb_base, _fraction, _interleaved), fused Wqkv,
// post-LN, SwiGLU feed-forward fc2(fc11(x) * silu(fc12(x))) and, in the
// released checkpoints, no Linear biases (qkv_proj_bias, mlp_fc1_bias,
// mlp_fc2_bias). Its config spells the GPT-2 names (n_embd, n_layer ...).
#include "families/architecture.h"

namespace engine {

Architecture NomicBertArchitecture() {
  Architecture a;
  a.name = "nomic_bert";
  a.model_types = {{"nomic_bert", "NomicBert"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kRotary;
  r.qkv = QkvLayout::kFused;
  r.feed_forward = FeedForward::kGatedSplit;
  ConfigKeys& k = a.keys;
  k.hidden_size = "n_embd";
  k.num_layers = "n_layer";
  k.num_heads = "n_head";
  k.intermediate_size = "n_inner";
  k.activation = "activation_function";
  k.activation_names_gated_unit = true;
  k.layer_norm_eps = "layer_norm_epsilon";
  k.max_position_embeddings = "n_positions";
  k.position_embedding_type = nullptr;
  k.rotary_base = "rotary_emb_base";
  k.rotary_fraction = "rotary_emb_fraction";
  k.rotary_interleaved = "rotary_emb_interleaved";
  k.rotary_unsupported_scaling = "rotary_scaling_factor";
  k.attention_bias = "qkv_proj_bias";
  k.ffn_in_bias = "mlp_fc1_bias";
  k.ffn_out_bias = "mlp_fc2_bias";
  k.prenorm = "prenorm";
  // NomicBertModel's other modes: causal attention, parallel attention and
  // MLP, xPos scaling, unscaled or layer-scaled scores, RMSNorm, mixture of
  // experts (nomic-embed-text-v2-moe).
  k.served_only = {{"causal", "false"},
                   {"parallel_block", "false"},
                   {"rotary_emb_scale_base", "null"},
                   {"scale_attn_weights", "true"},
                   {"scale_attn_by_inverse_layer_idx", "false"},
                   {"use_rms_norm", "false"},
                   {"moe_every_n_layers", "0"}};
  // NomicBertConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d = BertConfigDefaults();
  d.max_position_embeddings = 2048;
  d.layer_norm_eps = 1e-12f;
  d.activation = Activation::kSilu;
  d.rotary_base = 10000;
  d.rotary_fraction = 1;
  TensorNames& n = a.names;
  n.task_prefixes = {"bert."};
  n.word_embeddings = "embeddings.word_embeddings";
  n.token_type_embeddings = "embeddings.token_type_embeddings";
  n.embeddings_norm = "emb_ln";
  n.layer_prefix = "encoder.layers.";
  n.layer.qkv = "attn.Wqkv";
  n.layer.attention_out = "attn.out_proj";
  n.layer.attention_norm = "norm1";
  n.layer.ffn_in = "mlp.fc11";
  n.layer.ffn_gate = "mlp.fc12";
  n.layer.ffn_out = "mlp.fc2";
  n.layer.ffn_norm = "norm2";
  return a;
}

}  // namespace engine
