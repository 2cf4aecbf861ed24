// Writes a model directory with random weights in Hugging Face layout
// (config.json, model.safetensors, vocab.txt, tokenizer_config.json), for
// tests, benchmarks and the demo model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/config.h"

namespace engine {

// A task head on top of the encoder, with the family's tensor names
// (engine/src/families/architecture.h) and config.json keys, as the Hugging Face task
// models save them.
enum class RandomHead {
  kNone,
  // XForSequenceClassification: the classifier (BERT's dense is its pooler,
  // written whatever `with_pooler` says) and id2label {"0": "LABEL_0", ...}.
  kClassifier,
  // XForMaskedLM: the transform, its LayerNorm and the output bias; the
  // decoder is tied to the word embeddings (no weight written).
  kMaskedLm,
  // XForCausalLM of a family with a causal-LM scorer (Qwen3-Reranker): the
  // model's tensors under the task prefix ("model."), the LM head tied to
  // the word embeddings (tie_word_embeddings true, no weight written). The
  // directory's tokenizer must have the judgment tokens ("yes", "no").
  kCausalLm,
};

struct RandomModelSpec {
  // vocab_size is taken from `vocabulary` when that is not empty; the
  // family is the one of config.model_type.
  ModelConfig config = DefaultModelConfig();
  uint64_t seed = 1;
  bool with_pooler = true;
  RandomHead head = RandomHead::kNone;
  int num_labels = 1;  // kClassifier
  // Written to vocab.txt. Empty: DemoVocabulary().
  std::vector<std::string> vocabulary;
  // A JSON object whose keys are written over config.json's (a key the
  // engine refuses, in tests); empty: none.
  std::string config_overrides;
};

// The tiny model tests and fuzzers share: the default model type with hidden
// size 32 (4 heads), 2 layers, FFN 64 and 64 positions, seed 7; fast to write,
// load and run. A user that needs another shape starts from it and changes
// only what it needs.
RandomModelSpec TinyModelSpec(LayerNormPlacement placement = LayerNormPlacement::kPost);

// `config` with the tiny model's sizes (those TinyModelSpec() sets), e.g. on
// the defaults of another family.
ModelConfig WithTinyShape(ModelConfig config);

// The project's own small vocabulary: BERT's special tokens, ASCII
// characters and their "##" continuations, and common English words, so the
// WordPiece tokenizer works on any text with it.
std::vector<std::string> DemoVocabulary();

// Creates `dir` if needed and writes the model there.
absl::Status WriteRandomModel(const std::string& dir, const RandomModelSpec& spec);

}  // namespace engine
