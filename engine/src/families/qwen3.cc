// Qwen3 (Qwen3-Embedding-0.6B/4B/8B, Qwen3-Reranker): a decoder LM run
// over whole inputs. Word embeddings without a norm or positions; pre-norm
// layers with RMSNorm (input_layernorm, post_attention_layernorm) and a
// final `norm`; separate q/k/v_proj with grouped-query attention
// (num_key_value_heads) and head_dim from config.json (16 heads of 128 on
// a hidden size of 1,024 in the 0.6B); Q and K RMS-normalized per head
// (q_norm, k_norm) before rotary positions (rope_theta); causal attention;
// SwiGLU down_proj(silu(gate_proj(x)) * up_proj(x)); no biases
// (attention_bias). Qwen3-Embedding is saved from Qwen3Model (no prefix)
// and pools the last token, the <|endoftext|> its tokenizer appends.
// Qwen3-Reranker is saved from Qwen3ForCausalLM ("model.", lm_head or tied
// embeddings) and scores P("yes") against "no" at the last position of its
// model card's prompt.
#include "families/architecture.h"

namespace engine {

Architecture Qwen3Architecture() {
  Architecture a;
  a.name = "qwen3";
  a.model_types = {{"qwen3", "Qwen3"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kRotary;
  r.norm_placement = NormPlacement::kPre;
  r.norm = NormKind::kRms;
  r.mask = AttentionMask::kCausal;
  r.qk_norm = true;
  r.feed_forward = FeedForward::kGatedSplit;
  // SwiGLU's product is the int8 path's worst input: one level cost the
  // 28-layer bench model pooled cosine 0.983-0.986 to fp32, two levels
  // reach 0.99+ for 2x that one matmul's integer work, on every ISA level
  // (bf16 down_proj weights would need AVX512_BF16, and gained little more
  // in the simulation; bench/decoders/README.md).
  r.int8_two_level_ffn_out = true;
  r.biases = {false, false, false, false};
  ConfigKeys& k = a.keys;
  k.layer_norm_eps = "rms_norm_eps";
  k.type_vocab_size = nullptr;
  k.position_embedding_type = nullptr;
  k.rotary_base = "rope_theta";
  k.rotary_unsupported_scaling = "rope_scaling";
  k.attention_bias = "attention_bias";
  k.num_kv_heads = "num_key_value_heads";
  k.head_dim = "head_dim";
  k.sliding_switch = "use_sliding_window";
  // Served causal, as Qwen3Model runs; a checkpoint trained bidirectional
  // (an embedder saved with the switch on) would be served wrong.
  k.served_only = {{"use_bidirectional_attention", "false"}};
  // Qwen3Config's defaults.
  ConfigDefaults& d = a.defaults;
  d.max_position_embeddings = 32768;
  d.type_vocab_size = 0;
  d.pad_token_id = 0;
  d.layer_norm_eps = 1e-6f;
  d.activation = Activation::kSilu;
  d.rotary_base = 10000;
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
  n.layer.ffn_gate = "mlp.gate_proj";
  n.layer.ffn_in = "mlp.up_proj";
  n.layer.ffn_out = "mlp.down_proj";
  n.layer.ffn_norm = "post_attention_layernorm";
  n.final_norm = "norm";
  // Qwen3-Reranker's model card.
  CausalLmScorerNames& lm = n.causal_lm;
  lm.task_prefix = "model.";
  lm.lm_head = "lm_head";
  lm.tie_key = "tie_word_embeddings";
  lm.positive_token = "yes";
  lm.negative_token = "no";
  lm.prefix =
      "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query "
      "and the Instruct provided. Note that the answer can only be \"yes\" or \"no\"."
      "<|im_end|>\n<|im_start|>user\n";
  lm.middle = "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}";
  lm.suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  lm.default_instruction =
      "Given a web search query, retrieve relevant passages that answer the query";
  return a;
}

}  // namespace engine
