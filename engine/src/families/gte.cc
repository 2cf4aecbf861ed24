// GTE v1.5 and gte-multilingual (Alibaba's "new" model_type): BERT's
// embeddings without a position table, rotary positions (rope_theta, with
// the fixed NTK scaling of rope_scaling {"type": "ntk"}), fused qkv_proj,
// post-LN, GeGLU feed-forward down(up * act(gate)) with up and gate in one
// bias-free up_gate_proj (up first).
#include "families/architecture.h"

namespace engine {

Architecture GteArchitecture() {
  Architecture a;
  a.name = "gte";
  a.model_types = {{"new", "New"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kRotary;
  r.qkv = QkvLayout::kFused;
  r.feed_forward = FeedForward::kGatedFused;
  r.gate_half = GateHalf::kSecond;
  r.biases.ffn_in = false;
  ConfigKeys& k = a.keys;
  k.position_embedding_value = "rope";
  k.rotary_base = "rope_theta";
  k.rope_scaling = "rope_scaling";
  // NewModel's other modes: RMSNorm, log-n attention scaling.
  k.served_only = {{"layer_norm_type", "\"layer_norm\""},
                   {"logn_attention_scale", "false"},
                   {"logn_attention_clip1", "false"}};
  // NewConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d = BertConfigDefaults();
  d.rotary_base = 10000;
  TensorNames& n = a.names;
  n.task_prefixes = {"new."};
  n.word_embeddings = "embeddings.word_embeddings";
  n.token_type_embeddings = "embeddings.token_type_embeddings";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer_prefix = "encoder.layer.";
  n.layer.qkv = "attention.qkv_proj";
  n.layer.attention_out = "attention.o_proj";
  n.layer.attention_norm = "attn_ln";
  n.layer.ffn_in = "mlp.up_gate_proj";
  n.layer.ffn_out = "mlp.down_proj";
  n.layer.ffn_norm = "mlp_ln";
  n.pooler = "pooler.dense";
  return a;
}

}  // namespace engine
