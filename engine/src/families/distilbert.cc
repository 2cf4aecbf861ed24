// DistilBERT (distilbert-base, msmarco-distilbert, SST-2 classifiers): its
// own config keys (dim, n_layers, n_heads, hidden_dim, activation) and
// module names (transformer.layer.N.attention.q_lin, sa_layer_norm, ffn.lin1,
// ...), absolute positions from 0, no token types, no pooler, eps 1e-12
// (not in its config). Sinusoidal position tables are stored in the
// checkpoint like learned ones.
#include "families/architecture.h"

namespace engine {

Architecture DistilBertArchitecture() {
  Architecture a;
  a.name = "distilbert";
  a.model_types = {{"distilbert", "DistilBert"}};
  a.recipe = BertRecipe();
  a.keys.hidden_size = "dim";
  a.keys.num_layers = "n_layers";
  a.keys.num_heads = "n_heads";
  a.keys.intermediate_size = "hidden_dim";
  a.keys.activation = "activation";
  a.keys.layer_norm_eps = nullptr;
  a.keys.type_vocab_size = nullptr;
  a.keys.position_embedding_type = nullptr;
  a.defaults = BertConfigDefaults();
  a.defaults.type_vocab_size = 0;
  TensorNames& n = a.names;
  n.task_prefixes = {"distilbert."};
  n.word_embeddings = "embeddings.word_embeddings";
  n.position_embeddings = "embeddings.position_embeddings";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer_prefix = "transformer.layer.";
  n.layer.query = "attention.q_lin";
  n.layer.key = "attention.k_lin";
  n.layer.value = "attention.v_lin";
  n.layer.attention_out = "attention.out_lin";
  n.layer.attention_norm = "sa_layer_norm";
  n.layer.ffn_in = "ffn.lin1";
  n.layer.ffn_out = "ffn.lin2";
  n.layer.ffn_norm = "output_layer_norm";
  // DistilBertForSequenceClassification: pre_classifier, ReLU, classifier.
  n.classifier = {"pre_classifier", HeadActivation::kRelu, "classifier"};
  // DistilBertForMaskedLM: the transform takes config's activation; the
  // projector's weight is tied to the word embeddings, its bias its own.
  n.masked_lm = {"vocab_transform",
                 HeadActivation::kConfig,
                 "vocab_layer_norm",
                 "vocab_projector",
                 {"vocab_projector.bias"}};
  return a;
}

}  // namespace engine
