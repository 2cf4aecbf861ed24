// MPNet (all-mpnet-base-v2, multi-qa-mpnet): RoBERTa-style positions, no
// token types, and a learned relative-position bias
// (encoder.relative_attention_bias, [buckets, heads]) indexed by the
// bucketed signed distance between key and query and added to every
// layer's scaled attention scores (layers/relative_position.h).
#include "models/architecture.h"

namespace engine {

Architecture MpnetArchitecture() {
  Architecture a;
  a.name = "mpnet";
  a.model_types = {"mpnet"};
  a.keys.type_vocab_size = nullptr;
  a.default_layer_norm_eps = 1e-5f;
  a.default_type_vocab_size = 0;
  a.default_pad_token_id = 1;
  a.position_ids = PositionIds::kAfterPadding;
  a.relative_attention_bias = true;
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
