#include "engine/random_model.h"

#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "engine/config.h"
#include "io/safetensors_writer.h"
#include "models/architecture.h"
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

  void Normal(const std::string& name, std::vector<int64_t> shape, float std) {
    NamedTensor t = Make(name, std::move(shape));
    std::normal_distribution<float> dist(0.0f, std);
    for (float& v : t.values) v = dist(rng_);
    tensors_.push_back(std::move(t));
  }
  void Constant(const std::string& name, std::vector<int64_t> shape, float value) {
    NamedTensor t = Make(name, std::move(shape));
    for (float& v : t.values) v = value;
    tensors_.push_back(std::move(t));
  }
  void Linear(const std::string& prefix, int64_t in, int64_t out) {
    Normal(prefix + ".weight", {out, in}, 0.02f);
    Constant(prefix + ".bias", {out}, 0.0f);
  }
  void LayerNorm(const std::string& prefix, int64_t hidden) {
    Constant(prefix + ".weight", {hidden}, 1.0f);
    Constant(prefix + ".bias", {hidden}, 0.0f);
  }
  const std::vector<NamedTensor>& tensors() const { return tensors_; }

 private:
  static NamedTensor Make(const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return NamedTensor{name, std::move(shape), std::vector<float>(static_cast<size_t>(n))};
  }
  std::mt19937_64 rng_;
  std::vector<NamedTensor> tensors_;
};

// Up to this many classifier labels (the loader's own bound on num_labels).
constexpr int kMaxLabels = 1 << 20;
// The classifier's weight: larger than the encoder's 0.02 so that the
// scores of different inputs differ visibly.
constexpr float kClassifierStd = 0.5f;

// config.json "architectures" of the task model: "<family class><task>"
// (BertForSequenceClassification); null for a model_type not listed.
const char* TaskClassPrefix(const std::string& model_type) {
  static const std::map<std::string, const char*> kPrefixes = {
      {"bert", "Bert"},
      {"roberta", "Roberta"},
      {"xlm-roberta", "XLMRoberta"},
      {"camembert", "Camembert"},
  };
  const auto it = kPrefixes.find(model_type);
  return it == kPrefixes.end() ? nullptr : it->second;
}

// The head's tensors, after the encoder's (the pooler included).
absl::Status WriteHead(const RandomModelSpec& spec, const ModelConfig& config,
                       const Architecture& architecture, WeightWriter* w) {
  const int64_t h = config.hidden_size;
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
    // BERT's classifier reads the pooler: already there with `with_pooler`.
    if (names.dense != architecture.names.pooler || !spec.with_pooler) w->Linear(names.dense, h, h);
    w->Normal(names.out + ".weight", {spec.num_labels, h}, kClassifierStd);
    w->Constant(names.out + ".bias", {spec.num_labels}, 0.0f);
  } else if (spec.head == RandomHead::kMaskedLm) {
    const MaskedLmHeadNames& names = architecture.names.masked_lm;
    if (names.transform.empty() || names.bias.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(config.model_type, " has no masked-LM head"));
    }
    w->Linear(names.transform, h, h);
    w->LayerNorm(names.norm, h);
    // The decoder is tied to the word embeddings: no weight, only the bias.
    w->Constant(names.bias.front(), {config.vocab_size}, 0.0f);
  }
  return absl::OkStatus();
}

// ModelConfigToJson's text with the head's keys: the task model's
// "architectures" and, for a classifier, id2label / label2id.
std::string HeadConfigJson(const RandomModelSpec& spec, const ModelConfig& config) {
  std::string text = ModelConfigToJson(config);
  if (spec.head == RandomHead::kNone) return text;
  nlohmann::json j = nlohmann::json::parse(text);
  if (const char* prefix = TaskClassPrefix(config.model_type); prefix != nullptr) {
    j["architectures"] = nlohmann::json::array(
        {absl::StrCat(prefix, spec.head == RandomHead::kClassifier ? "ForSequenceClassification"
                                                                   : "ForMaskedLM")});
  }
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
      config.intermediate_size <= 0 || config.hidden_size % config.num_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad model shape: hidden ", config.hidden_size, ", heads ", config.num_heads,
                     ", layers ", config.num_layers, ", intermediate ", config.intermediate_size));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": ", ec.message()));

  const int64_t h = config.hidden_size;
  const int64_t inter = config.intermediate_size;
  WeightWriter w(spec.seed);
  w.Normal("embeddings.word_embeddings.weight", {config.vocab_size, h}, 0.02f);
  w.Normal("embeddings.position_embeddings.weight", {config.max_position_embeddings, h}, 0.02f);
  w.Normal("embeddings.token_type_embeddings.weight", {config.type_vocab_size, h}, 0.02f);
  w.LayerNorm("embeddings.LayerNorm", h);
  for (int l = 0; l < config.num_layers; ++l) {
    const std::string p = absl::StrCat("encoder.layer.", l);
    w.Linear(p + ".attention.self.query", h, h);
    w.Linear(p + ".attention.self.key", h, h);
    w.Linear(p + ".attention.self.value", h, h);
    w.Linear(p + ".attention.output.dense", h, h);
    w.LayerNorm(p + ".attention.output.LayerNorm", h);
    w.Linear(p + ".intermediate.dense", h, inter);
    w.Linear(p + ".output.dense", inter, h);
    w.LayerNorm(p + ".output.LayerNorm", h);
  }
  if (config.layer_norm_placement == LayerNormPlacement::kPre) w.LayerNorm("encoder.LayerNorm", h);
  if (spec.with_pooler) w.Linear("pooler.dense", h, h);
  if (spec.head != RandomHead::kNone) {
    const Architecture* architecture = FindArchitecture(config.model_type);
    if (architecture == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown model_type \"", config.model_type, "\""));
    }
    if (absl::Status s = WriteHead(spec, config, *architecture, &w); !s.ok()) return s;
  }

  const std::filesystem::path root(dir);
  if (absl::Status s = WriteSafetensors((root / "model.safetensors").string(), w.tensors());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile((root / "config.json").string(), HeadConfigJson(spec, config));
      !s.ok()) {
    return s;
  }
  std::string vocab_text;
  for (const std::string& token : vocab) absl::StrAppend(&vocab_text, token, "\n");
  if (absl::Status s = WriteFile((root / "vocab.txt").string(), vocab_text); !s.ok()) return s;
  return WriteFile((root / "tokenizer_config.json").string(),
                   "{\n  \"do_lower_case\": true,\n  \"model_max_length\": " +
                       std::to_string(config.max_length()) + "\n}\n");
}

}  // namespace engine
