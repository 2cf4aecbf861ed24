// RoBERTa and the families built on it (XLM-RoBERTa: multilingual-e5,
// bge-m3, paraphrase-multilingual; CamemBERT): BERT's modules and names,
// positions counted from pad_token_id + 1 over the real tokens
// (transformers' create_position_ids_from_input_ids), one token type,
// LayerNorm eps from config.json (1e-5). Checkpoints of the task models
// (RobertaForSequenceClassification, XLMRobertaForMaskedLM,
// CamembertFor...) prefix the encoder with "roberta.".
#include "models/architecture.h"

namespace engine {

Architecture RobertaArchitecture() {
  Architecture a;
  a.name = "roberta";
  a.model_types = {"roberta", "xlm-roberta", "camembert"};
  a.default_layer_norm_eps = 1e-5f;
  a.default_type_vocab_size = 1;
  a.default_pad_token_id = 1;
  a.position_ids = PositionIds::kAfterPadding;
  a.names = BertTensorNames();
  a.names.task_prefixes = {"roberta."};
  return a;
}

}  // namespace engine
