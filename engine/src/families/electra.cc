// ELECTRA discriminators and the cross-encoders built on them: BERT's
// layers and names, but embeddings of "embedding_size" width (word,
// position, token type, LayerNorm) projected to hidden_size by
// embeddings_project when the two differ. Task checkpoints prefix
// "electra.".
#include "families/architecture.h"

namespace engine {

Architecture ElectraArchitecture() {
  Architecture a;
  a.name = "electra";
  a.model_types = {{"electra", "Electra"}};
  a.recipe = BertRecipe();
  a.recipe.embedding_projection = true;
  a.keys.embedding_size = "embedding_size";
  a.keys.served_only = {{"is_decoder", "false"}};  // causal attention otherwise
  a.defaults = BertConfigDefaults();
  a.names = BertTensorNames();
  a.names.task_prefixes = {"electra."};
  a.names.embeddings_project = "embeddings_project";
  a.names.pooler = "";
  // ElectraClassificationHead: dense, GELU (erf), out_proj on the first token.
  a.names.classifier = {"classifier.dense", HeadActivation::kGeluErf, "classifier.out_proj"};
  // ElectraForMaskedLM: generator_predictions (H -> embedding_size, GELU,
  // LayerNorm), generator_lm_head tied to the word embeddings [vocab, E].
  a.names.masked_lm = {"generator_predictions.dense",
                       HeadActivation::kGeluErf,
                       "generator_predictions.LayerNorm",
                       "generator_lm_head",
                       {"generator_lm_head.bias"}};
  return a;
}

}  // namespace engine
