// BERT (bert-base, MiniLM, bge, e5, gte-base ...): absolute positions from
// 0, token types, post-LN; the project's own pre-LN models say
// "layer_norm_placement": "pre" in config.json and add encoder.LayerNorm.
// Heads: the pooler + classifier, cls.predictions for masked-LM.
#include "models/architecture.h"

namespace engine {

LayerTensorNames BertLayerTensorNames() {
  LayerTensorNames n;
  n.query = "attention.self.query";
  n.key = "attention.self.key";
  n.value = "attention.self.value";
  n.attention_out = "attention.output.dense";
  n.attention_norm = "attention.output.LayerNorm";
  n.ffn_in = "intermediate.dense";
  n.ffn_out = "output.dense";
  n.ffn_norm = "output.LayerNorm";
  return n;
}

TensorNames BertTensorNames() {
  TensorNames n;
  n.word_embeddings = "embeddings.word_embeddings";
  n.position_embeddings = "embeddings.position_embeddings";
  n.token_type_embeddings = "embeddings.token_type_embeddings";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer_prefix = "encoder.layer.";
  n.layer = BertLayerTensorNames();
  n.final_norm = "encoder.LayerNorm";
  n.pooler = "pooler.dense";
  return n;
}

Architecture BertArchitecture() {
  Architecture a;
  a.name = "bert";
  a.model_types = {"bert"};
  a.reads_layer_norm_placement = true;
  a.names = BertTensorNames();
  a.names.task_prefixes = {"bert."};
  // BertForSequenceClassification: the pooler (tanh), then classifier.
  a.names.classifier = {"pooler.dense", HeadActivation::kTanh, "classifier"};
  // BertForMaskedLM: cls.predictions, the transform activated by hidden_act.
  a.names.masked_lm = {"cls.predictions.transform.dense",
                       HeadActivation::kConfig,
                       "cls.predictions.transform.LayerNorm",
                       "cls.predictions.decoder",
                       {"cls.predictions.bias", "cls.predictions.decoder.bias"}};
  return a;
}

}  // namespace engine
