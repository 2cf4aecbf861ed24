// The architecture registry: one file per encoder family
// (models/<family>.cc), listed in models/registry.cc. A family's file is the
// one place that says how its models are built; everything else (the
// config reader loading/model_config.cc, the weight loader model/weights.cc, the
// random-model writer, make-model, inspect) reads an Architecture and the
// ModelConfig made from it, never a family's name, key or default.
//
// What a family file holds:
//   - name, the config.json model_type values it loads and the class-name
//     prefix of each ("XLMRoberta" for xlm-roberta: "XLMRobertaModel").
//   - Recipe: how its layers are built. Position scheme and position ids,
//     the bias added to attention scores, LayerNorm placement, the
//     feed-forward kind, how Q/K/V are stored, which Linears have biases,
//     the attention pattern, the embedding projection. The config reader,
//     the loader and the random-model writer switch over the enums of the
//     parts they build, so a new value does not compile until they handle
//     it.
//   - ConfigKeys: how its config.json spells the hyperparameters, including
//     the keys only its recipe reads (null where it has none).
//   - ConfigDefaults: the values when config.json omits a key.
//   - TensorNames: its checkpoint's module names, heads included, with the
//     config.json keys only the heads read (their biases, activation,
//     pooling).
// tests/engine/registry_test.cc checks that each family's parts agree (the
// recipe's tensors are named, its keys spelled, its defaults valid) and that
// every family round-trips through the random-model writer and the loader.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/config.h"

namespace engine {

// Where a token's position enters the layer math.
enum class PositionScheme {
  // A table [max_position_embeddings, embedding width] indexed by the
  // position id (Recipe::position_ids) and added to the word embeddings.
  // DistilBERT's sinusoidal tables are stored in the checkpoint like
  // learned ones.
  kLearnedAbsolute,
  // Q and K rotated by position in every layer (ConfigKeys rotary_*,
  // rope_scaling; ConfigDefaults rotary_*): no position table.
  kRotary,
  // No position input but the attention bias (ALiBi).
  kNone,
};

// What every layer adds to its scaled attention scores.
enum class AttentionBias {
  kNone,
  // MPNet: a learned [buckets, heads] table (TensorNames::
  // relative_attention_bias) indexed by the bucketed signed key-query
  // distance, logarithmic up to Recipe::relative_attention_max_distance
  // (layers/relative_position.h); the bucket count is a config key.
  kRelativeBuckets,
  // ALiBi: -slope(head) * |i - j| with the fixed geometric slopes of the
  // ALiBi paper (layers/alibi.h), nothing in the checkpoint.
  kAlibi,
};

// Where each sublayer's LayerNorm sits (ModelConfig::layer_norm_placement).
enum class NormPlacement {
  // Always post-LN: x = LN(x + sublayer(x)); no final norm.
  kPost,
  // Post-LN unless config.json's ConfigKeys::layer_norm_placement says
  // "pre" (the project's own pre-LN test models): x = x + sublayer(LN(x)),
  // then the final norm (TensorNames::final_norm) after the last layer.
  kFromConfig,
  // Always pre-LN, with the final norm (ModernBERT).
  kPre,
};

// The feed-forward sublayer.
enum class FeedForward {
  // ffn_out(act(ffn_in(x))), act from config.json's ConfigKeys::activation.
  kDense,
  // out(act(gate(x)) * up(x)) with gate and up in one [2I, H] tensor
  // (LayerTensorNames::ffn_in), the activated half first or second as
  // Recipe::gate_half says.
  kGatedFused,
  // The same with gate (LayerTensorNames::ffn_gate) and up (ffn_in) as two
  // [I, H] tensors (NomicBert's fc12, fc11).
  kGatedSplit,
};

// Which half of a fused gate-and-up tensor is activated.
enum class GateHalf { kFirst, kSecond };

// How the checkpoint stores the attention's input projections.
enum class QkvLayout {
  // Three [H, H] Linears (LayerTensorNames query, key, value), stacked
  // into one [3H, H] matmul at load.
  kSeparate,
  // One [3H, H] tensor, Q | K | V (LayerTensorNames::qkv).
  kFused,
};

// Which keys each query attends to, per layer.
enum class AttentionPattern {
  // Every key of its sequence, in every layer.
  kGlobal,
  // Sliding-window layers (|i - j| <= ConfigKeys::local_attention / 2)
  // except every ConfigKeys::global_every_n-th layer, from layer 0.
  kAlternating,
  // Gemma 3: ConfigKeys::layer_types lists "sliding_attention" or
  // "full_attention" per layer (without it, every sliding_pattern-th layer,
  // counting from 1, is full); sliding layers see ConfigKeys::sliding_window
  // keys: |i - j| <= sliding_window / 2 bidirectional (transformers turns it
  // into an exclusive bound of sliding_window / 2 + 1), i - j <
  // sliding_window causal.
  kLayerTypes,
};

// Which keys of its sequence a token sees (besides the pattern's windows).
enum class AttentionMask {
  kBidirectional,
  kCausal,  // tokens j <= i (decoder LMs: Qwen3)
  // Bidirectional where ConfigKeys::bidirectional is true, else causal
  // (Gemma 3: EmbeddingGemma sets use_bidirectional_attention).
  kFromConfig,
};

// The normalization layers.
enum class NormKind {
  kLayerNorm,
  kRms,  // RMSNorm: x * rsqrt(mean(x^2) + eps) * w (Qwen3)
  // RMSNorm scaled by (1 + w) (Gemma), folded into the gamma at load.
  kRmsUnitOffset,
};

// How the word embeddings enter the first layer.
enum class EmbeddingScale {
  kNone,
  kSqrtHidden,  // multiplied by sqrt(hidden_size) (Gemma)
};

// How a family's layers are built.
struct Recipe {
  PositionScheme positions = PositionScheme::kLearnedAbsolute;
  PositionIds position_ids = PositionIds::kFromZero;
  // Whether the embeddings carry token types is ConfigDefaults::
  // type_vocab_size (0: none).
  AttentionBias attention_bias = AttentionBias::kNone;
  // kRelativeBuckets: the distance beyond which buckets stop growing (not
  // in config.json).
  int relative_attention_max_distance = 0;
  NormPlacement norm_placement = NormPlacement::kPost;
  FeedForward feed_forward = FeedForward::kDense;
  GateHalf gate_half = GateHalf::kFirst;  // kGatedFused
  QkvLayout qkv = QkvLayout::kSeparate;
  // Which Linears and norms carry a bias where config.json does not say
  // (ConfigKeys *_bias).
  Biases biases;
  AttentionPattern attention = AttentionPattern::kGlobal;
  // Pre-LN: whether layer 0 normalizes its attention input (ModernBERT's
  // is an identity: the embeddings end with a norm).
  bool first_attention_norm = true;
  // ELECTRA: embeddings of config.json's ConfigKeys::embedding_size width,
  // projected to hidden_size by TensorNames::embeddings_project when the
  // two differ.
  bool embedding_projection = false;
  // Decoder-based families:
  NormKind norm = NormKind::kLayerNorm;
  AttentionMask mask = AttentionMask::kBidirectional;
  // Q and K RMS-normalized per head before rotary (LayerTensorNames q_norm,
  // k_norm; NormKind's offset applies).
  bool qk_norm = false;
  // Each sublayer's output normalized before the residual add
  // (LayerTensorNames attention_out_norm, ffn_out_norm).
  bool sublayer_output_norms = false;
  EmbeddingScale embedding_scale = EmbeddingScale::kNone;
  // int8: the FFN's output projection reads its input in two levels (~16
  // bits, twice that matmul's integer work; kernels.h "Two-level inputs")
  // instead of one u8 per row. For gated FFNs whose product feeds it a
  // heavy-tailed input that one level resolves too coarsely over many
  // layers (bench/decoders/README.md).
  bool int8_two_level_ffn_out = false;
};

// A config.json key whose other values change the computation in a way the
// engine does not implement: where present (and not null) it must be
// `served` (JSON text: "false", "\"layer_norm\""), else the model is refused
// with one line naming the key, the value and the file.
struct ServedValue {
  const char* key;
  const char* served;
};

// config.json keys, as the family spells them. Null: the family's config
// has no such key (the default of ConfigDefaults applies).
struct ConfigKeys {
  const char* hidden_size = "hidden_size";
  const char* num_layers = "num_hidden_layers";
  const char* num_heads = "num_attention_heads";
  const char* intermediate_size = "intermediate_size";
  const char* activation = "hidden_act";
  // Whether that key names the gated unit ("swiglu", "geglu") rather than
  // its activation.
  bool activation_names_gated_unit = false;
  const char* layer_norm_eps = "layer_norm_eps";
  const char* type_vocab_size = "type_vocab_size";
  const char* max_position_embeddings = "max_position_embeddings";
  // Checked to be position_embedding_value when present.
  const char* position_embedding_type = "position_embedding_type";
  const char* position_embedding_value = "absolute";
  // Read only where the recipe calls for them:
  const char* layer_norm_placement = nullptr;        // NormPlacement::kFromConfig
  const char* embedding_size = nullptr;              // Recipe::embedding_projection
  const char* relative_attention_buckets = nullptr;  // AttentionBias::kRelativeBuckets
  // PositionScheme::kRotary:
  const char* rotary_base = nullptr;        // theta (of global layers)
  const char* rotary_local_base = nullptr;  // theta of sliding-window layers
  const char* rotary_fraction = nullptr;    // share of each head rotated
  const char* rotary_interleaved = nullptr;
  const char* rope_scaling = nullptr;  // {"type": "ntk", "factor": f}
  // Checked to be null: a scaling the engine does not implement.
  const char* rotary_unsupported_scaling = nullptr;
  // AttentionPattern::kAlternating:
  const char* local_attention = nullptr;  // window width (both sides)
  const char* global_every_n = nullptr;
  // Booleans over Recipe::biases:
  const char* attention_bias = nullptr;
  const char* ffn_in_bias = nullptr;
  const char* ffn_out_bias = nullptr;
  const char* norm_bias = nullptr;
  // Checked to be false: a pre-LN switch for a post-LN-only recipe.
  const char* prenorm = nullptr;
  // Decoder-based families:
  const char* num_kv_heads = nullptr;  // grouped-query attention; absent: num_heads
  const char* head_dim = nullptr;      // absent: hidden_size / num_heads
  // The scores are scaled by this value^-1/2 (Gemma's query_pre_attn_scalar);
  // absent: head_dim^-1/2.
  const char* attention_scale_base = nullptr;
  const char* bidirectional = nullptr;  // AttentionMask::kFromConfig
  // AttentionPattern::kLayerTypes:
  const char* layer_types = nullptr;
  const char* sliding_window = nullptr;
  const char* sliding_pattern = nullptr;
  // Checked to be false: a sliding-window switch the recipe does not run
  // (Qwen3's use_sliding_window).
  const char* sliding_switch = nullptr;
  // Checked to be null: attention-logit soft-capping (Gemma 2).
  const char* attention_softcap = nullptr;
  // The family's other switches and modes that are served in one setting only.
  std::vector<ServedValue> served_only;
};

// The values a ModelConfig takes where config.json omits their key.
struct ConfigDefaults {
  int max_position_embeddings = 0;
  int type_vocab_size = 0;  // 0: no token-type embeddings
  int pad_token_id = 0;
  float layer_norm_eps = 0;
  Activation activation = Activation::kGeluErf;
  int relative_attention_buckets = 0;  // AttentionBias::kRelativeBuckets: at least 2
  float rotary_base = 10000;           // PositionScheme::kRotary
  float rotary_local_base = 0;         // 0: as rotary_base
  float rotary_fraction = 1;
  int local_attention = 0;  // AttentionPattern::kAlternating
  int global_every_n = 1;
  // AttentionPattern::kLayerTypes
  int sliding_window = 0;
  int sliding_pattern = 6;
  bool bidirectional = false;  // AttentionMask::kFromConfig
};

// Checkpoint names of one layer's modules, after "<layer_prefix><index>.";
// ".weight" / ".bias" are appended. Q, K and V are stacked into one matmul.
struct LayerTensorNames {
  std::string qkv;  // QkvLayout::kFused
  std::string query;
  std::string key;
  std::string value;
  std::string attention_out;
  std::string attention_norm;  // post-LN: after x + attention
  std::string ffn_in;          // gated: up, or gate and up fused
  std::string ffn_gate;        // FeedForward::kGatedSplit
  std::string ffn_out;
  std::string ffn_norm;  // post-LN: after x + FFN
  std::string q_norm;    // Recipe::qk_norm
  std::string k_norm;
  std::string attention_out_norm;  // Recipe::sublayer_output_norms
  std::string ffn_out_norm;
};

// How a head's hidden dense layer is activated; kConfig: the encoder's own
// activation (config.json's hidden_act).
enum class HeadActivation { kTanh, kRelu, kGeluErf, kConfig };

// A head Linear's or LayerNorm's bias: in the checkpoint unless config.json's
// `key` says false (`fallback` where config.json omits the key); an absent
// bias is zero. No key: always in the checkpoint.
struct HeadBias {
  const char* key = nullptr;
  bool fallback = true;
};

// What the classifier's dense layer reads of a sequence's last hidden states.
enum class HeadPooling {
  kFirstToken,
  kMean,       // the mean over the sequence's tokens
  kLastToken,  // causal LMs: the last token's state
};

// The sequence-classification head: out(norm(act(dense(pooled)))), names of
// torch.nn.Linear modules at the checkpoint's top level ("" when the family
// has no such head). BERT's dense is its pooler.
struct ClassifierHeadNames {
  std::string dense;
  HeadActivation activation = HeadActivation::kTanh;
  std::string out;
  // A LayerNorm after the activation (eps: the encoder's layer_norm_eps);
  // "": none.
  std::string norm = "";
  HeadBias dense_bias = {};
  HeadBias norm_bias = {};  // `norm`'s beta; the output always has a bias
  // config.json's key naming the activation (a transformers ACT2FN name:
  // gelu, gelu_new, gelu_pytorch_tanh, relu, silu, swish, tanh); `activation`
  // where config.json omits it. Null: always `activation`.
  const char* activation_key = nullptr;
  // config.json's key choosing the pooling, "cls" (the first token) or
  // "mean"; `pooling` where config.json omits it. Null: always `pooling`.
  const char* pooling_key = nullptr;
  HeadPooling pooling = HeadPooling::kFirstToken;
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
  HeadBias transform_bias = {};
  HeadBias norm_bias = {};
  HeadBias output_bias = {};  // `bias`
  // As ClassifierHeadNames::activation_key.
  const char* activation_key = nullptr;
  // Where the transform is shared with the classifier (ModernBERT's `head`):
  // the classifier's output weight, whose presence says the checkpoint holds
  // the classifier, not the masked-LM head, when neither the output bias nor
  // the decoder weight tells. "": the transform is the masked-LM head's own.
  std::string classifier_out = "";
};

// A causal LM scored as a reranker (Qwen3-Reranker): the LM head's logits
// of two judgment tokens at the last position, score = softmax over the
// two = sigmoid(yes - no). Only those two rows of the LM head are read.
// The checkpoint is such a scorer when it was saved from the causal LM
// (its names carry `task_prefix`); the ids of the two tokens come from the
// model directory's tokenizer.
struct CausalLmScorerNames {
  std::string task_prefix;        // "model." (XForCausalLM)
  std::string lm_head;            // ".weight" appended; absent or tied: the word embeddings
  const char* tie_key = nullptr;  // config.json's tie_word_embeddings
  std::string positive_token;     // "yes"
  std::string negative_token;     // "no"
  // The prompt around each (query, document) pair: prefix + the middle with
  // {instruction}, {query} and {document} replaced + suffix, tokenized
  // without special tokens; `default_instruction` where a request gives
  // none.
  std::string prefix;
  std::string middle;
  std::string suffix;
  std::string default_instruction;
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
  std::string embeddings_project;  // Recipe::embedding_projection
  std::string layer_prefix;        // "encoder.layer."
  LayerTensorNames layer;
  std::string relative_attention_bias;  // AttentionBias::kRelativeBuckets: [buckets, heads]
  std::string final_norm;               // NormPlacement::kFromConfig, when pre-LN
  std::string pooler;
  ClassifierHeadNames classifier;
  MaskedLmHeadNames masked_lm;
  CausalLmScorerNames causal_lm;
};

// One config.json model_type a family loads, and the class-name prefix of
// its transformers models ("XLMRoberta": XLMRobertaModel,
// XLMRobertaForSequenceClassification), written to "architectures".
struct ModelType {
  ModelType(std::string type_name, std::string prefix, std::string key = "", std::string value = "")
      : name(std::move(type_name)),
        class_prefix(std::move(prefix)),
        selector_key(std::move(key)),
        selector_value(std::move(value)) {}

  std::string name;
  std::string class_prefix;
  // Where several families share a model_type (JinaBERT's "bert"): the
  // config.json key and string value that pick this one. Empty: the
  // family the model_type means otherwise.
  std::string selector_key;
  std::string selector_value;
};

struct Architecture {
  std::string name;  // reported by GetModelInfo and inspect
  std::vector<ModelType> model_types;
  Recipe recipe;
  ConfigKeys keys;
  ConfigDefaults defaults;
  TensorNames names;
};

// Every family of the registry, in registration order; the first is the
// default (DefaultModelConfig).
const std::vector<Architecture>& Architectures();
// The family that loads `model_type` when no selector picks another, or null.
const Architecture* FindArchitecture(const std::string& model_type);
// The family named `name` (Architecture::name), or null.
const Architecture* ArchitectureNamed(const std::string& name);
// The family a config was read for (ModelConfig::architecture).
const Architecture& ArchitectureOf(const ModelConfig& config);
// The family that loads a config.json of `model_type`: the one whose
// selector `selector_value_of(key)` matches, else FindArchitecture's; null
// for an unknown type. selector_value_of returns "" for an absent key.
template <typename Lookup>
const Architecture* SelectArchitecture(const std::string& model_type,
                                       const Lookup& selector_value_of);
// The class-name prefix of `model_type`, one of the family's.
const std::string& ClassPrefix(const Architecture& architecture, const std::string& model_type);
// A config of the family's defaults, its recipe's rules and no shape yet:
// where the config reader and make-model start.
ModelConfig FamilyDefaults(const Architecture& architecture, const std::string& model_type);
// Every model_type the registry loads, comma-separated, for error messages.
std::string SupportedModelTypes();
// AttentionPattern::kLayerTypes: the window of the sliding layers from
// ConfigKeys::sliding_window as transformers' masks read it (causal: i - j <
// sliding_window; bidirectional: sliding_window / 2 + 1 with exclusive
// bounds) for config->causal, and, with `pattern` > 0 (no layer_types list),
// every pattern-th layer counting from 1 full and the others sliding.
void SetLayerTypes(int pattern, int sliding_window, ModelConfig* config);

// One per family file.
Architecture BertArchitecture();
Architecture RobertaArchitecture();
Architecture DistilBertArchitecture();
Architecture MpnetArchitecture();
Architecture ElectraArchitecture();
Architecture NomicBertArchitecture();
Architecture GteArchitecture();
Architecture ModernBertArchitecture();
Architecture JinaBertArchitecture();
Architecture Qwen3Architecture();
Architecture Gemma3Architecture();

// BERT's recipe and config defaults, which the other families start from.
Recipe BertRecipe();
ConfigDefaults BertConfigDefaults();
// BERT's layer and embedding names, shared by the families that kept them.
LayerTensorNames BertLayerTensorNames();
TensorNames BertTensorNames();
// RoBERTa's head names, shared by MPNet.
ClassifierHeadNames RobertaClassifierNames();
MaskedLmHeadNames RobertaMaskedLmNames();

template <typename Lookup>
const Architecture* SelectArchitecture(const std::string& model_type,
                                       const Lookup& selector_value_of) {
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      if (type.name == model_type && !type.selector_key.empty() &&
          selector_value_of(type.selector_key) == type.selector_value) {
        return &architecture;
      }
    }
  }
  return FindArchitecture(model_type);
}

}  // namespace engine
