// MPNet (all-mpnet-base-v2, multi-qa-mpnet): RoBERTa-style positions, no
// token types, and a learned relative-position bias
// (encoder.relative_attention_bias, [buckets, heads]) indexed by the
// bucketed signed distance between key and query and added to every
// layer's scaled attention scores (layers/relative_position.h).
#include "families/architecture.h"

namespace engine {

Architecture MpnetArchitecture() {
  Architecture a;
  a.name = "mpnet";
  a.model_types = {{"mpnet", "MPNet"}};
  a.recipe = BertRecipe();
  a.recipe.position_ids = PositionIds::kAfterPadding;
  a.recipe.attention_bias = AttentionBias::kRelativeBuckets;
  a.recipe.relative_attention_max_distance = 128;  // fixed in MPNet's code
  a.keys.type_vocab_size = nullptr;
  a.keys.position_embedding_type = nullptr;
  a.keys.relative_attention_buckets = "relative_attention_num_buckets";
  a.defaults = BertConfigDefaults();
  a.defaults.type_vocab_size = 0;
  a.defaults.pad_token_id = 1;
  a.defaults.layer_norm_eps = 1e-5f;
  a.defaults.relative_attention_buckets = 32;  // MPNetConfig's
  TensorNames& n = a.names;
  n.task_prefixes = {"mpnet."};
  n.word_embeddings = "embeddings.word_embeddings";
  n.position_embeddings = "embeddings.position_embeddings";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer_prefix = "encoder.layer.";
  n.layer.query = "attention.attn.q";
  n.layer.key = "attention.attn.k";
  n.layer.value = "attention.attn.v";
  n.layer.attention_out = "attention.attn.o";
  n.layer.attention_norm = "attention.LayerNorm";
  n.layer.ffn_in = "intermediate.dense";
  n.layer.ffn_out = "output.dense";
  n.layer.ffn_norm = "output.LayerNorm";
  n.relative_attention_bias = "encoder.relative_attention_bias";
  n.pooler = "pooler.dense";
  // MPNetClassificationHead and MPNetLMHead are RoBERTa's, by the same names.
  n.classifier = RobertaClassifierNames();
  n.masked_lm = RobertaMaskedLmNames();
  return a;
}

}  // namespace engine
