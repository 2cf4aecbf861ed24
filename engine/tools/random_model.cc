#include "engine/tools/random_model.h"

#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/config.h"
#include "families/architecture.h"
#include "heads/heads.h"
#include "io/safetensors_writer.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

// Common English words, so demo-model tokenization mostly yields whole words.
constexpr const char* kWords[] = {
    "the",     "of",       "and",     "to",        "in",       "a",        "is",      "that",
    "for",     "it",       "as",      "was",       "with",     "be",       "by",      "on",
    "not",     "he",       "i",       "this",      "are",      "or",       "his",     "from",
    "at",      "which",    "but",     "have",      "an",       "had",      "they",    "you",
    "were",    "their",    "one",     "all",       "we",       "can",      "her",     "has",
    "there",   "been",     "if",      "more",      "when",     "will",     "would",   "who",
    "so",      "no",       "what",    "up",        "out",      "about",    "time",    "into",
    "only",    "some",     "could",   "new",       "them",     "man",      "other",   "then",
    "do",      "first",    "any",     "my",        "now",      "such",     "like",    "our",
    "over",    "me",       "even",    "most",      "made",     "after",    "also",    "did",
    "many",    "before",   "must",    "through",   "back",     "years",    "where",   "much",
    "your",    "way",      "well",    "down",      "should",   "because",  "each",    "just",
    "those",   "people",   "how",     "too",       "little",   "state",    "good",    "very",
    "make",    "world",    "still",   "own",       "see",      "men",      "work",    "long",
    "get",     "here",     "between", "both",      "life",     "being",    "under",   "never",
    "day",     "same",     "another", "know",      "while",    "last",     "might",   "us",
    "great",   "old",      "year",    "off",       "come",     "since",    "against", "go",
    "came",    "right",    "used",    "take",      "three",    "model",    "text",    "search",
    "query",   "document", "vector",  "embedding", "sentence", "language", "data",    "service",
    "server",  "request",  "fast",    "quick",     "brown",    "fox",      "jumps",   "lazy",
    "dog",     "hello",    "encoder", "token",     "batch",    "latency",  "cpu",     "memory",
    "network", "cloud",    "user",    "answer",    "question", "find",     "similar", "meaning",
    "word",    "words",    "city",    "river",     "music",    "book",     "school",  "water"};

constexpr const char* kSuffixes[] = {"##s",   "##ed", "##ing",  "##ly",   "##er",   "##est",
                                     "##ion", "##al", "##ment", "##ness", "##able", "##ful"};

class WeightWriter {
 public:
  explicit WeightWriter(uint64_t seed) : rng_(seed) {}

  // Written before every name from now on (a task model's "model.").
  void SetPrefix(std::string prefix) { prefix_ = std::move(prefix); }

  void Normal(const std::string& name, std::vector<int64_t> shape, float std) {
    NamedTensor t = Make(prefix_ + name, std::move(shape));
    std::normal_distribution<float> dist(0.0f, std);
    for (float& v : t.values) v = dist(rng_);
    tensors_.push_back(std::move(t));
  }
  void Constant(const std::string& name, std::vector<int64_t> shape, float value) {
    NamedTensor t = Make(prefix_ + name, std::move(shape));
    for (float& v : t.values) v = value;
    tensors_.push_back(std::move(t));
  }
  void Linear(const std::string& prefix, int64_t in, int64_t out, bool bias = true) {
    Normal(prefix + ".weight", {out, in}, 0.02f);
    if (bias) Constant(prefix + ".bias", {out}, 0.0f);
  }
  // `identity`: the stored weight that scales by 1 (0 where the family
  // scales by 1 + w).
  void LayerNorm(const std::string& prefix, int64_t hidden, bool bias = true,
                 float identity = 1.0f) {
    Constant(prefix + ".weight", {hidden}, identity);
    if (bias) Constant(prefix + ".bias", {hidden}, 0.0f);
  }
  const std::vector<NamedTensor>& tensors() const { return tensors_; }

 private:
  static NamedTensor Make(const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return NamedTensor{name, std::move(shape), std::vector<float>(static_cast<size_t>(n))};
  }
  std::mt19937_64 rng_;
  std::string prefix_;
  std::vector<NamedTensor> tensors_;
};

// Up to this many classifier labels (the loader's own bound on num_labels).
constexpr int kMaxLabels = 1 << 20;
// The classifier's weight: larger than the encoder's 0.02 so that the
// scores of different inputs differ visibly.
constexpr float kClassifierStd = 0.5f;

// The encoder's tensors, by the family's names and recipe, the pooler
// included when `with_pooler` and the family has one.
void WriteEncoder(const ModelConfig& config, const Architecture& architecture, bool with_pooler,
                  WeightWriter* w) {
  const TensorNames& n = architecture.names;
  const Recipe& recipe = architecture.recipe;
  const int64_t h = config.hidden_size;
  const int64_t e = config.embedding_width();
  const int64_t inter = config.intermediate_size;
  w->Normal(n.word_embeddings + ".weight", {config.vocab_size, e}, 0.02f);
  switch (recipe.positions) {
    case PositionScheme::kLearnedAbsolute:
      w->Normal(n.position_embeddings + ".weight", {config.max_position_embeddings, e}, 0.02f);
      break;
    case PositionScheme::kRotary:
    case PositionScheme::kNone:
      break;
  }
  if (config.type_vocab_size > 0) {
    w->Normal(n.token_type_embeddings + ".weight", {config.type_vocab_size, e}, 0.02f);
  }
  const Biases& biases = config.biases;
  const float one = recipe.norm == NormKind::kRmsUnitOffset ? 0.0f : 1.0f;
  if (!n.embeddings_norm.empty()) w->LayerNorm(n.embeddings_norm, e, biases.norm, one);
  if (config.has_embedding_projection()) w->Linear(n.embeddings_project, e, h);
  const LayerTensorNames& l = n.layer;
  const int64_t q_width = config.query_width();
  const int64_t kv_width = config.kv_width();
  for (int index = 0; index < config.num_layers; ++index) {
    const std::string p = absl::StrCat(n.layer_prefix, index, ".");
    switch (recipe.qkv) {
      case QkvLayout::kSeparate:
        w->Linear(p + l.query, h, q_width, biases.attention);
        w->Linear(p + l.key, h, kv_width, biases.attention);
        w->Linear(p + l.value, h, kv_width, biases.attention);
        break;
      case QkvLayout::kFused:
        w->Linear(p + l.qkv, h, config.qkv_width(), biases.attention);
        break;
    }
    w->Linear(p + l.attention_out, q_width, h, biases.attention);
    if (recipe.qk_norm) {
      w->LayerNorm(p + l.q_norm, config.head_size(), false, one);
      w->LayerNorm(p + l.k_norm, config.head_size(), false, one);
    }
    if (recipe.sublayer_output_norms) {
      w->LayerNorm(p + l.attention_out_norm, h, biases.norm, one);
      w->LayerNorm(p + l.ffn_out_norm, h, biases.norm, one);
    }
    if (config.layer_norm_placement == LayerNormPlacement::kPost || index > 0 ||
        config.first_attention_norm) {
      w->LayerNorm(p + l.attention_norm, h, biases.norm, one);
    }
    switch (recipe.feed_forward) {
      case FeedForward::kDense:
        w->Linear(p + l.ffn_in, h, inter, biases.ffn_in);
        break;
      case FeedForward::kGatedFused:
        w->Linear(p + l.ffn_in, h, 2 * inter, biases.ffn_in);
        break;
      case FeedForward::kGatedSplit:
        w->Linear(p + l.ffn_in, h, inter, biases.ffn_in);
        w->Linear(p + l.ffn_gate, h, inter, biases.ffn_in);
        break;
    }
    w->Linear(p + l.ffn_out, inter, h, biases.ffn_out);
    w->LayerNorm(p + l.ffn_norm, h, biases.norm, one);
  }
  switch (recipe.attention_bias) {
    case AttentionBias::kNone:
    case AttentionBias::kAlibi:
      break;
    case AttentionBias::kRelativeBuckets:
      w->Normal(n.relative_attention_bias + ".weight",
                {config.relative_attention_buckets, config.num_heads}, 0.02f);
      break;
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPre) {
    w->LayerNorm(n.final_norm, h, biases.norm, one);
  }
  if (with_pooler && !n.pooler.empty()) w->Linear(n.pooler, h, h);
}

// The head's tensors, after the encoder's (the pooler included), with the
// biases the config's defaults call for (ModelConfigToJson writes no head
// keys).
absl::Status WriteHead(const RandomModelSpec& spec, const ModelConfig& config,
                       const Architecture& architecture, WeightWriter* w) {
  const int64_t h = config.hidden_size;
  const nlohmann::json config_json = nlohmann::json::parse(ModelConfigToJson(config));
  if (spec.head == RandomHead::kClassifier) {
    const ClassifierHeadNames& names = architecture.names.classifier;
    if (names.out.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.model_type, " has no sequence-classification head"));
    }
    if (spec.num_labels <= 0 || spec.num_labels > kMaxLabels) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad label count ", spec.num_labels, " (expected 1 to ", kMaxLabels, ")"));
    }
    absl::StatusOr<HeadSettings> settings =
        ReadClassifierSettings(names, config, config_json, "config.json");
    if (!settings.ok()) return settings.status();
    // BERT's classifier reads the pooler: already there with `with_pooler`.
    if (names.dense != architecture.names.pooler || !spec.with_pooler) {
      w->Linear(names.dense, h, h, settings->dense_bias);
    }
    if (!names.norm.empty()) w->LayerNorm(names.norm, h, settings->norm_bias);
    w->Normal(names.out + ".weight", {spec.num_labels, h}, kClassifierStd);
    w->Constant(names.out + ".bias", {spec.num_labels}, 0.0f);
  } else if (spec.head == RandomHead::kMaskedLm) {
    const MaskedLmHeadNames& names = architecture.names.masked_lm;
    if (names.transform.empty() || names.bias.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(config.model_type, " has no masked-LM head"));
    }
    absl::StatusOr<HeadSettings> settings =
        ReadMaskedLmSettings(names, config, config_json, "config.json");
    if (!settings.ok()) return settings.status();
    w->Linear(names.transform, h, config.embedding_width(), settings->dense_bias);
    w->LayerNorm(names.norm, config.embedding_width(), settings->norm_bias);
    // The decoder is tied to the word embeddings: no weight, only the bias.
    if (settings->output_bias) w->Constant(names.bias.front(), {config.vocab_size}, 0.0f);
  }
  return absl::OkStatus();
}

// ModelConfigToJson's text with the head's keys: the task model's
// "architectures" and, for a classifier, id2label / label2id.
std::string HeadConfigJson(const RandomModelSpec& spec, const ModelConfig& config,
                           const Architecture& architecture) {
  nlohmann::json j = nlohmann::json::parse(ModelConfigToJson(config));
  if (!spec.config_overrides.empty()) j.update(nlohmann::json::parse(spec.config_overrides));
  if (spec.head == RandomHead::kNone) return j.dump(2) + "\n";
  const char* task = spec.head == RandomHead::kClassifier ? "ForSequenceClassification"
                     : spec.head == RandomHead::kMaskedLm ? "ForMaskedLM"
                                                          : "ForCausalLM";
  j["architectures"] =
      nlohmann::json::array({absl::StrCat(ClassPrefix(architecture, config.model_type), task)});
  if (spec.head == RandomHead::kCausalLm) j[architecture.names.causal_lm.tie_key] = true;
  if (spec.head == RandomHead::kClassifier) {
    nlohmann::json id2label = nlohmann::json::object();
    nlohmann::json label2id = nlohmann::json::object();
    for (int i = 0; i < spec.num_labels; ++i) {
      const std::string label = absl::StrCat("LABEL_", i);
      id2label[std::to_string(i)] = label;
      label2id[label] = i;
    }
    j["id2label"] = std::move(id2label);
    j["label2id"] = std::move(label2id);
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::vector<std::string> DemoVocabulary() {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (char c = 33; c < 127; ++c) {
    if (c >= 'A' && c <= 'Z') continue;  // the demo tokenizer lower-cases
    vocab.emplace_back(1, c);
  }
  for (char c = 33; c < 127; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) vocab.push_back(std::string("##") + c);
  }
  for (const char* s : kSuffixes) vocab.emplace_back(s);
  for (const char* w : kWords) {
    if (std::string(w).size() > 1) vocab.emplace_back(w);
  }
  return vocab;
}

absl::Status WriteRandomModel(const std::string& dir, const RandomModelSpec& spec) {
  ModelConfig config = spec.config;
  const std::vector<std::string> vocab =
      spec.vocabulary.empty() ? DemoVocabulary() : spec.vocabulary;
  config.vocab_size = static_cast<int>(vocab.size());
  if (config.hidden_size <= 0 || config.num_heads <= 0 || config.num_layers <= 0 ||
      config.intermediate_size <= 0 ||
      (config.head_dim == 0 && config.hidden_size % config.num_heads != 0) ||
      config.num_heads % config.kv_heads() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad model shape: hidden ", config.hidden_size, ", heads ", config.num_heads,
                     ", layers ", config.num_layers, ", intermediate ", config.intermediate_size));
  }
  const Architecture* architecture = ArchitectureNamed(config.architecture);
  if (architecture == nullptr) architecture = FindArchitecture(config.model_type);
  if (architecture == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported model_type \"", config.model_type,
                                                   "\" (supported: ", SupportedModelTypes(), ")"));
  }
  const NormPlacement placement = architecture->recipe.norm_placement;
  if (config.layer_norm_placement == LayerNormPlacement::kPre &&
      placement == NormPlacement::kPost) {
    return absl::InvalidArgumentError(
        absl::StrCat(config.model_type, " is post-LN only: its config has no pre-LN"));
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPost &&
      placement == NormPlacement::kPre) {
    return absl::InvalidArgumentError(absl::StrCat(config.model_type, " is pre-LN only"));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": ", ec.message()));

  WeightWriter w(spec.seed);
  if (spec.head == RandomHead::kCausalLm) {
    const CausalLmScorerNames& lm = architecture->names.causal_lm;
    if (lm.task_prefix.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.model_type, " has no causal-LM scorer (Qwen3-Reranker's)"));
    }
    w.SetPrefix(lm.task_prefix);
  }
  WriteEncoder(config, *architecture, spec.with_pooler, &w);
  RETURN_IF_ERROR(WriteHead(spec, config, *architecture, &w));

  const std::filesystem::path root(dir);
  RETURN_IF_ERROR(WriteSafetensors((root / "model.safetensors").string(), w.tensors()));
  if (absl::Status s =
          WriteFile((root / "config.json").string(), HeadConfigJson(spec, config, *architecture));
      !s.ok()) {
    return s;
  }
  std::string vocab_text;
  for (const std::string& token : vocab) absl::StrAppend(&vocab_text, token, "\n");
  RETURN_IF_ERROR(WriteFile((root / "vocab.txt").string(), vocab_text));
  return WriteFile((root / "tokenizer_config.json").string(),
                   "{\n  \"do_lower_case\": true,\n  \"model_max_length\": " +
                       std::to_string(config.max_length()) + "\n}\n");
}

RandomModelSpec TinyModelSpec(LayerNormPlacement placement) {
  RandomModelSpec spec;
  spec.config = WithTinyShape(DefaultModelConfig());
  spec.config.layer_norm_placement = placement;
  spec.seed = 7;
  return spec;
}

ModelConfig WithTinyShape(ModelConfig config) {
  config.hidden_size = 32;
  config.num_heads = 4;
  config.num_layers = 2;
  config.intermediate_size = 64;
  config.max_position_embeddings = 64;
  return config;
}

}  // namespace engine
