// Gemma 3 text models as embedders (EmbeddingGemma-300m: gemma3_text with
// use_bidirectional_attention): word embeddings scaled by sqrt(hidden_size);
// pre-norm layers with four Gemma RMSNorms (scale 1 + w): input_layernorm
// before attention, post_attention_layernorm on its output before the
// residual add, pre_feedforward_layernorm, post_feedforward_layernorm; a
// final `norm`; separate q/k/v_proj with grouped-query attention and
// head_dim from config.json, q_norm / k_norm per head before rotary, scores
// scaled by query_pre_attn_scalar^-1/2; sliding-window and full layers as
// layer_types says, each kind with its rotary base (rope_local_base_freq,
// rope_theta); GeGLU down_proj(gelu_tanh(gate_proj(x)) * up_proj(x)); no
// biases. Bidirectional where use_bidirectional_attention is true, causal
// otherwise. Saved from Gemma3TextModel without a prefix; the
// sentence-transformers pipeline (mean pooling, two Dense layers,
// Normalize) and task prompts come from the model directory.
#include "models/architecture.h"

namespace engine {

Architecture Gemma3Architecture() {
  Architecture a;
  a.name = "gemma3_text";
  a.model_types = {{"gemma3_text", "Gemma3Text"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kRotary;
  r.norm_placement = NormPlacement::kPre;
  r.norm = NormKind::kRmsUnitOffset;
  r.mask = AttentionMask::kFromConfig;
  r.qk_norm = true;
  r.sublayer_output_norms = true;
  r.embedding_scale = EmbeddingScale::kSqrtHidden;
  r.feed_forward = FeedForward::kGatedSplit;
  r.biases = {false, false, false, false};
  r.attention = AttentionPattern::kLayerTypes;
  ConfigKeys& k = a.keys;
  k.activation = "hidden_activation";
  k.layer_norm_eps = "rms_norm_eps";
  k.type_vocab_size = nullptr;
  k.position_embedding_type = nullptr;
  k.rotary_base = "rope_theta";
  k.rotary_local_base = "rope_local_base_freq";
  k.rotary_unsupported_scaling = "rope_scaling";
  k.attention_bias = "attention_bias";
  k.num_kv_heads = "num_key_value_heads";
  k.head_dim = "head_dim";
  k.attention_scale_base = "query_pre_attn_scalar";
  k.bidirectional = "use_bidirectional_attention";
  k.layer_types = "layer_types";
  k.sliding_window = "sliding_window";
  k.sliding_pattern = "sliding_window_pattern";
  k.attention_softcap = "attn_logit_softcapping";
  // Gemma3TextConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d.max_position_embeddings = 131072;
  d.type_vocab_size = 0;
  d.pad_token_id = 0;
  d.layer_norm_eps = 1e-6f;
  d.activation = Activation::kGeluTanh;
  d.rotary_base = 1000000;
  d.rotary_local_base = 10000;
  d.sliding_window = 4096;
  d.sliding_pattern = 6;
  d.bidirectional = false;
  TensorNames& n = a.names;
  n.task_prefixes = {"model."};
  n.word_embeddings = "embed_tokens";
  n.layer_prefix = "layers.";
  n.layer.query = "self_attn.q_proj";
  n.layer.key = "self_attn.k_proj";
  n.layer.value = "self_attn.v_proj";
  n.layer.attention_out = "self_attn.o_proj";
  n.layer.q_norm = "self_attn.q_norm";
  n.layer.k_norm = "self_attn.k_norm";
  n.layer.attention_norm = "input_layernorm";
  n.layer.attention_out_norm = "post_attention_layernorm";
  n.layer.ffn_norm = "pre_feedforward_layernorm";
  n.layer.ffn_gate = "mlp.gate_proj";
  n.layer.ffn_in = "mlp.up_proj";
  n.layer.ffn_out = "mlp.down_proj";
  n.layer.ffn_out_norm = "post_feedforward_layernorm";
  n.final_norm = "norm";
  return a;
}

}  // namespace engine
