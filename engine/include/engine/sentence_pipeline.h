// A model directory's sentence-transformers pipeline (modules.json and the
// config folder of each module, config_sentence_transformers.json's prompts)
// and the one call that turns a sequence of an EncodeResult into the model's
// embedding: pooling, Dense layers, Matryoshka truncation, normalization.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/encoder.h"
#include "engine/heads.h"
#include "engine/model_directory.h"

namespace engine {

// torch.nn activation of a sentence-transformers Dense module.
enum class ModuleActivation { kIdentity, kTanh, kReLU, kSigmoid, kGelu };

// One sentence_transformers.models.Dense: out = act(W x + b), W [out, in].
struct DenseLayer {
  std::string directory;  // e.g. "2_Dense", for messages
  int in_features = 0;
  int out_features = 0;
  ModuleActivation activation = ModuleActivation::kIdentity;
  std::vector<float> weight;  // out_features x in_features, row-major
  std::vector<float> bias;    // out_features floats, empty without bias
};

// A ColBERT model's encoding of queries and documents (PyLate's
// config_sentence_transformers.json): a prefix token put after the first
// token ([CLS]), each kind cut to its length, queries padded with [MASK] to
// query_length (query expansion; attended to only when
// attend_to_expansion_tokens), and the skiplist words' tokens (punctuation)
// left out of a document's vectors. The defaults are PyLate's.
struct ColbertSettings {
  std::string query_prefix = "[Q] ";  // a token of the tokenizer, e.g. "[unused0]"
  std::string document_prefix = "[D] ";
  int query_length = 32;
  int document_length = 180;
  bool do_query_expansion = true;
  bool attend_to_expansion_tokens = false;
  // Absent from the file: Python's string.punctuation, one word a character.
  std::vector<std::string> skiplist_words;
};

struct SentencePipeline {
  // Whether modules.json was read (else the pipeline is the fallback:
  // 1_Pooling/config.json when present, else the fallback pooling).
  bool from_modules_json = false;
  // The pooling modes, in sentence-transformers' concatenation order (cls,
  // max, mean, mean_sqrt_len, weightedmean, lasttoken); one of kPooler alone
  // never comes from a file.
  std::vector<Pooling> pooling = {Pooling::kCls};
  // Pooling's include_prompt: false leaves the prompt's tokens (with [CLS])
  // out of pooling.
  bool include_prompt = true;
  std::vector<DenseLayer> dense;
  bool normalize = false;  // a Normalize module
  // A SparseEncoder (MLMTransformer + SpladePooling): the default output is
  // sparse, with these options.
  bool sparse = false;
  SparseOptions sparse_options;
  // PyLate's ColBERT layout (modules.json's pylate.models.Dense.Dense after
  // the Transformer): every token's state projected by this layer (identity
  // activation), then normalized.
  std::optional<DenseLayer> token_projection;
  // A ColBERT model's query and document encoding: PyLate's (with
  // token_projection, from config_sentence_transformers.json) or
  // colbert-ir's (artifact.metadata beside an HF_ColBERT checkpoint, whose
  // projection is the checkpoint's linear.weight). Such a model has no
  // single vector of its own.
  std::optional<ColbertSettings> colbert;
  // config_sentence_transformers.json's prompts and default_prompt_name.
  std::map<std::string, std::string> prompts;
  std::string default_prompt_name;

  // The pooled vector's size, and the embedding's size after the Dense layers.
  int pooled_size(int hidden_size) const;
  int output_size(int hidden_size) const;
  // "cls", "mean+max", ... in the concatenation order.
  std::string pooling_names() const;
};

// Reads `model_dir`'s pipeline. Errors name the file at fault: bad JSON, an
// unknown module type, a missing module folder, a Dense folder with only
// pytorch_model.bin (the engine reads safetensors only), shapes that do not
// chain.
// Without a Pooling module or 1_Pooling folder the pooling is `fallback`:
// CLS for encoders, the last token for causal models (a causal model's
// first token sees only itself).
absl::StatusOr<SentencePipeline> ReadSentencePipeline(const std::string& model_dir,
                                                      Pooling fallback = Pooling::kCls);
// The same from a directory the loader has open (each file read once).
absl::StatusOr<SentencePipeline> ReadSentencePipeline(ModelDirectory& directory,
                                                      Pooling fallback = Pooling::kCls);

// What one request wants of the pipeline.
struct EmbeddingOptions {
  // The pooling modes; empty: the pipeline's. kNone is not a pooling here.
  std::vector<Pooling> pooling;
  // Leading tokens left out of pooling (include_prompt false: [CLS] and the
  // prompt's tokens, as sentence-transformers masks attention_mask[:, :n]).
  // CLS pooling then takes the first kept token, as sentence-transformers'
  // padded path does (argmax of the mask).
  int skip_tokens = 0;
  bool apply_dense = true;  // the pipeline's Dense layers
  bool normalize = false;   // L2, after truncation to `dimensions`
  int dimensions = 0;       // Matryoshka: keep the first this many values; 0 keeps all
};

// Turns sequence `index` of `result` into an embedding in `out` (resized).
// Thread-safe (const on everything it reads).
absl::Status Embed(const SentencePipeline& pipeline, const Encoder& encoder,
                   const EncodeResult& result, int index, const EmbeddingOptions& options,
                   std::vector<float>* out);

}  // namespace engine
