// The architecture registry: for each encoder family, how config.json
// spells its hyperparameters, how its checkpoints name their tensors, and
// which rules of the shared layer math it uses (positions, token types,
// embedding projection, relative-position bias). One definition per family
// (models/<family>.cc), listed in models/registry.cc; the loader and the
// layers read only this and ModelConfig, never a model_type.
#pragma once

#include <string>
#include <vector>

#include "engine/config.h"

namespace engine {

// config.json keys of the shared hyperparameters, as the family spells them.
struct ConfigKeys {
  const char* hidden_size = "hidden_size";
  const char* num_layers = "num_hidden_layers";
  const char* num_heads = "num_attention_heads";
  const char* intermediate_size = "intermediate_size";
  const char* activation = "hidden_act";
  // Null: the family's config has no such key and uses the default below.
  const char* layer_norm_eps = "layer_norm_eps";
  const char* type_vocab_size = "type_vocab_size";
};

// Checkpoint names of one layer's modules, after "<layer_prefix><index>.";
// ".weight" / ".bias" are appended. Q, K and V are stacked into one matmul.
struct LayerTensorNames {
  std::string query;
  std::string key;
  std::string value;
  std::string attention_out;
  std::string attention_norm;  // post-LN: after x + attention
  std::string ffn_in;
  std::string ffn_out;
  std::string ffn_norm;  // post-LN: after x + FFN
};

// How a head's hidden dense layer is activated; kConfig: the encoder's own
// activation (config.json's hidden_act).
enum class HeadActivation { kTanh, kRelu, kGeluErf, kConfig };

// The sequence-classification head: out(act(dense(first token))), names of
// torch.nn.Linear modules at the checkpoint's top level ("" when the family
// has no such head). BERT's dense is its pooler.
struct ClassifierHeadNames {
  std::string dense;
  HeadActivation activation = HeadActivation::kTanh;
  std::string out;
};

// The masked-LM head (SPLADE): decoder(norm(act(transform(h)))) + bias, with
// transform H -> embedding width and the decoder [vocab, embedding width]
// tied to the word embeddings when the checkpoint omits its weight.
struct MaskedLmHeadNames {
  std::string transform;
  HeadActivation activation = HeadActivation::kGeluErf;
  std::string norm;
  std::string decoder;  // ".weight" appended; may be absent (tied)
  // The output bias, the first present of these full tensor names.
  std::vector<std::string> bias;
};

// Checkpoint names of the model's modules ("" where the family has none),
// without the task prefix a checkpoint may carry.
struct TensorNames {
  // Stripped from the checkpoint's names when present ("roberta." in
  // RobertaForSequenceClassification); checkpoints saved from the base
  // model (as sentence-transformers does) have none.
  std::vector<std::string> task_prefixes;
  std::string word_embeddings;
  std::string position_embeddings;
  std::string token_type_embeddings;
  std::string embeddings_norm;
  std::string embeddings_project;  // ELECTRA, when embedding_size != hidden_size
  std::string layer_prefix;        // "encoder.layer."
  LayerTensorNames layer;
  std::string relative_attention_bias;  // MPNet: an Embedding [buckets, heads]
  std::string final_norm;               // pre-LN checkpoints
  std::string pooler;
  ClassifierHeadNames classifier;
  MaskedLmHeadNames masked_lm;
};

struct Architecture {
  std::string name;                      // reported by GetModelInfo and inspect
  std::vector<std::string> model_types;  // config.json model_type values it loads
  ConfigKeys keys;
  float default_layer_norm_eps = 1e-12f;
  int default_type_vocab_size = 2;  // 0: no token-type embeddings
  int default_pad_token_id = 0;
  PositionIds position_ids = PositionIds::kFromZero;
  bool reads_embedding_size = false;        // ELECTRA's "embedding_size"
  bool relative_attention_bias = false;     // MPNet's "relative_attention_num_buckets"
  bool reads_layer_norm_placement = false;  // the project's own pre-LN test models
  TensorNames names;
};

// Every family of the registry, in registration order (BERT first).
const std::vector<Architecture>& Architectures();
// The family that loads `model_type`, or null.
const Architecture* FindArchitecture(const std::string& model_type);
// Every model_type the registry loads, comma-separated, for error messages.
std::string SupportedModelTypes();

// One per family file.
Architecture BertArchitecture();
Architecture RobertaArchitecture();
Architecture DistilBertArchitecture();
Architecture MpnetArchitecture();
Architecture ElectraArchitecture();

// BERT's layer and embedding names, shared by the families that kept them.
LayerTensorNames BertLayerTensorNames();
TensorNames BertTensorNames();
// RoBERTa's head names, shared by MPNet.
ClassifierHeadNames RobertaClassifierNames();
MaskedLmHeadNames RobertaMaskedLmNames();

}  // namespace engine
