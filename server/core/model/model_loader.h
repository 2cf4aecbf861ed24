// Loads what the server serves from a model directory: the encoder, its
// tokenizer, its sentence-transformers pipeline and its shipped calibration,
// under the model's served name. A thin adapter over the engine's one
// model-directory loader (engine/model_contents.h), which reads each file once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "engine/sentence_pipeline.h"
#include "engine/tokenizer.h"
#include "server/core/model/quantize.h"

namespace server::core {

// The task heads a model serves besides embeddings (engine/heads.h).
struct ModelHeads {
  std::optional<engine::ClassifierHead> classifier;  // classify; rerank when one label
  // SPLADE (masked-LM head), else bge-m3's lexical weights (sparse_linear.pt).
  bool sparse = false;
  engine::SparseOptions sparse_options;  // activation and pooling; max_active_dims per request
  // A sentence-transformers SparseEncoder (modules.json: MLMTransformer +
  // SpladePooling): sparse weights are its output, and it has no embedding
  // of its own (a request must name a pooling to get one).
  bool sparse_default = false;
  // The multi-vector (ColBERT) output (engine::Encoder::multi_vector).
  std::optional<engine::MultiVectorHead> multi_vector;
  // A ColBERT model (PyLate's layout): its output is one vector per token,
  // and it has no embedding of its own (a request must name a pooling).
  bool multi_vector_default = false;
};

// A ColBERT model's encoding of texts (engine::ColbertSettings) in ids,
// found through its tokenizer at load.
struct ColbertEncoding {
  int32_t query_prefix_id = -1;
  int32_t document_prefix_id = -1;
  int32_t mask_id = -1;  // query expansion's token
  int query_length = 0;
  int document_length = 0;
  bool expand_queries = true;
  bool attend_to_expansion = false;
  std::vector<int32_t> skip_ids;  // sorted: left out of a document's vectors
};

struct LoadedModel {
  // The name in every answer and in the metrics: --served-model-name, else
  // DefaultModelName (server/core/model/model_name.h).
  std::string name;
  // The directory read: the model path, or for a Hugging Face cache folder
  // the snapshot its refs/main names.
  std::string directory;
  std::unique_ptr<engine::Encoder> encoder;
  // Null when the directory has no tokenizer, or one this build cannot read:
  // the model still serves token ids, and text input is FAILED_PRECONDITION
  // with `tokenizer_error` as the reason.
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::string tokenizer_error;
  // The sentence-transformers pipeline (modules.json: pooling modes, Dense,
  // Normalize; prompts and default_prompt_name), engine/sentence_pipeline.h.
  engine::SentencePipeline pipeline;
  // The pipeline's first pooling mode: what answers and metrics name
  // (pipeline.pooling has them all).
  engine::Pooling default_pooling = engine::Pooling::kCls;
  // From the encoder at load (Encoder::classifier, has_masked_lm_head,
  // has_lexical_weights, multi_vector).
  ModelHeads heads;
  // A prompted reranker's (Encoder::pair_prompt) prefix and suffix ids,
  // tokenized once at load without special tokens (empty otherwise).
  std::vector<int32_t> pair_prompt_prefix;
  std::vector<int32_t> pair_prompt_suffix;
  // A ColBERT model's (SentencePipeline::colbert: PyLate's or colbert-ir's
  // layout) query and document encoding; empty for other models, bge-m3
  // included.
  std::optional<ColbertEncoding> colbert;
  // int8/uint8 embeddings' calibration (server/core/model/quantization_ranges.h),
  // set at start; null: none.
  std::shared_ptr<const core::QuantizationRanges> quantization_ranges;
  // The directory's own quantization_ranges.json, read with the model
  // (null: none) and its path: what quantization_ranges is set to when no
  // flag names a file for the model.
  std::shared_ptr<const core::QuantizationRanges> shipped_quantization_ranges;
  std::string shipped_quantization_ranges_source;

  // The size of the model's embedding: the pipeline's output (pooled modes, then Dense).
  int embedding_size() const { return pipeline.output_size(encoder->config().hidden_size); }

  // Tokens per input, special tokens included.
  int max_length() const { return encoder->config().max_length(); }
};

// Loads the model at `model_path`: a model directory, or a Hugging Face
// cache folder (models--ORG--NAME, engine/hub_cache.h). It is served as
// `served_name`, or when that is empty under DefaultModelName(model_path).
// Errors name the file at fault, and for files the OS's reason; a tokenizer
// file that is there but cannot be read is one (the model would otherwise
// silently lose text input).
absl::StatusOr<LoadedModel> LoadModel(const std::string& model_path,
                                      const engine::EncoderOptions& options,
                                      const std::string& served_name = "");

}  // namespace server::core
