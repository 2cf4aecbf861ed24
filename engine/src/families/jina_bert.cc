// JinaBERT (jina-embeddings-v2, jina-reranker-v1): config.json says
// model_type "bert" (the code comes through auto_map) with
// position_embedding_type "alibi", which selects this family. BERT's
// embeddings without a position table, BERT's attention plus ALiBi's
// per-head linear distance bias, post-LN, and a GLU feed-forward
// wo(act(gated) * non_gated) from one bias-free gated_layers tensor
// (activated half first), act from feed_forward_type (geglu: GELU,
// reglu: ReLU).
#include "families/architecture.h"

namespace engine {

Architecture JinaBertArchitecture() {
  Architecture a;
  a.name = "jina_bert";
  a.model_types = {{"bert", "JinaBert", "position_embedding_type", "alibi"}};
  Recipe& r = a.recipe;
  r = BertRecipe();
  r.positions = PositionScheme::kNone;
  r.attention_bias = AttentionBias::kAlibi;
  r.feed_forward = FeedForward::kGatedFused;
  r.gate_half = GateHalf::kFirst;
  r.biases.ffn_in = false;
  ConfigKeys& k = a.keys;
  k.activation = "feed_forward_type";
  k.activation_names_gated_unit = true;
  k.position_embedding_value = "alibi";
  // JinaBertConfig's defaults.
  ConfigDefaults& d = a.defaults;
  d = BertConfigDefaults();
  d.max_position_embeddings = 8192;
  // BERT's names (its heads too: JinaBertForSequenceClassification is
  // jina-reranker-v1's) but the position table and the feed-forward.
  TensorNames& n = a.names;
  n = BertArchitecture().names;
  n.position_embeddings.clear();
  n.final_norm.clear();
  n.layer.ffn_in = "mlp.gated_layers";
  n.layer.ffn_out = "mlp.wo";
  n.layer.ffn_norm = "mlp.layernorm";
  return a;
}

}  // namespace engine
