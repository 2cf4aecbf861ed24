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
#include "families/architecture.h"

namespace engine {

Architecture Gemma3Architecture() {
  // Qwen3's decoder layout (names, keys, grouped-query heads, Q/K norms,
  // split gated FFN) with Gemma's differences.
  Architecture a = Qwen3Architecture();
  a.name = "gemma3_text";
  a.model_types = {{"gemma3_text", "Gemma3Text"}};
  Recipe& r = a.recipe;
  r.norm = NormKind::kRmsUnitOffset;
  r.mask = AttentionMask::kFromConfig;
  r.sublayer_output_norms = true;
  r.embedding_scale = EmbeddingScale::kSqrtHidden;
  r.attention = AttentionPattern::kLayerTypes;
  // One int8 level suffices for GeGLU here: the 24-layer bench model's
  // pooled cosine to fp32 is 0.9994-0.9997 with it, and Qwen3's second
  // level cost this model 6-14% of its int8 time (bench/decoders/README.md).
  r.int8_two_level_ffn_out = false;
  ConfigKeys& k = a.keys;
  k.activation = "hidden_activation";
  k.rotary_local_base = "rope_local_base_freq";
  k.attention_scale_base = "query_pre_attn_scalar";
  k.bidirectional = "use_bidirectional_attention";  // honoured, unlike Qwen3's refusal
  k.served_only.clear();
  k.layer_types = "layer_types";
  k.sliding_window = "sliding_window";
  k.sliding_pattern = "sliding_window_pattern";
  k.sliding_switch = nullptr;
  k.attention_softcap = "attn_logit_softcapping";
  // Gemma3TextConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d.max_position_embeddings = 131072;
  d.activation = Activation::kGeluTanh;
  d.rotary_base = 1000000;
  d.rotary_local_base = 10000;
  d.sliding_window = 4096;
  d.sliding_pattern = 6;
  d.bidirectional = false;
  TensorNames& n = a.names;
  // Gemma's four norms: input_layernorm before attention (as Qwen3),
  // post_attention_layernorm on its output, pre_feedforward_layernorm,
  // post_feedforward_layernorm.
  n.layer.attention_out_norm = "post_attention_layernorm";
  n.layer.ffn_norm = "pre_feedforward_layernorm";
  n.layer.ffn_out_norm = "post_feedforward_layernorm";
  n.causal_lm = {};  // no reranker of this family
  return a;
}

}  // namespace engine
