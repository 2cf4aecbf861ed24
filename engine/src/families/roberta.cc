// RoBERTa and the families built on it (XLM-RoBERTa: multilingual-e5,
// bge-m3, paraphrase-multilingual; CamemBERT): BERT's modules and names,
// positions counted from pad_token_id + 1 over the real tokens
// (transformers' create_position_ids_from_input_ids), one token type,
// LayerNorm eps from config.json (1e-5). Checkpoints of the task models
// (RobertaForSequenceClassification, XLMRobertaForMaskedLM,
// CamembertFor...) prefix the encoder with "roberta."; their heads are
// classifier.{dense,out_proj} and lm_head.
#include "families/architecture.h"

namespace engine {

// RobertaClassificationHead: dense on the first token, tanh, out_proj.
ClassifierHeadNames RobertaClassifierNames() {
  return {"classifier.dense", HeadActivation::kTanh, "classifier.out_proj"};
}

// RobertaLMHead: dense, GELU (erf), layer_norm, decoder (tied), bias.
MaskedLmHeadNames RobertaMaskedLmNames() {
  return {"lm_head.dense",
          HeadActivation::kGeluErf,
          "lm_head.layer_norm",
          "lm_head.decoder",
          {"lm_head.bias", "lm_head.decoder.bias"}};
}

Architecture RobertaArchitecture() {
  Architecture a;
  a.name = "roberta";
  a.model_types = {
      {"roberta", "Roberta"}, {"xlm-roberta", "XLMRoberta"}, {"camembert", "Camembert"}};
  a.recipe = BertRecipe();
  a.recipe.position_ids = PositionIds::kAfterPadding;
  a.defaults = BertConfigDefaults();
  a.defaults.type_vocab_size = 1;
  a.defaults.pad_token_id = 1;
  a.defaults.layer_norm_eps = 1e-5f;
  a.names = BertTensorNames();
  a.names.task_prefixes = {"roberta."};
  a.names.classifier = RobertaClassifierNames();
  a.names.masked_lm = RobertaMaskedLmNames();
  a.keys.served_only = {{"is_decoder", "false"}};  // RobertaModel attends causally otherwise
  return a;
}

}  // namespace engine
