// Heads applied to every token's state: BAAI/bge-m3's lexical weights
// (sparse_linear.pt) and ColBERT projections (colbert_linear.pt), as
// FlagEmbedding's BGEM3 model defines them. The two ship as torch.save
// files beside the safetensors weights and are read by io/torch_file.h,
// which runs nothing in them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/heads.h"
#include "engine/model_directory.h"
#include "engine/sentence_pipeline.h"
#include "heads/heads.h"
#include "io/checkpoint.h"

namespace engine {

// bge-m3's sparse output: weight(token) = relu(w . h + b) per token, the
// maximum per token id; the ids in `excluded_ids` (the tokenizer's CLS,
// EOS, PAD and UNK, FlagEmbedding's unused_tokens) never appear.
struct LexicalWeightsHead {
  HeadLinear linear;  // H -> 1
  std::vector<int32_t> excluded_ids;
  std::string source;
};

struct MultiVectorWeights {
  MultiVectorHead head;
  HeadLinear linear;  // H -> dimensions
};

// The torch.save files of a bge-m3 directory.
inline constexpr char kLexicalWeightsFile[] = "sparse_linear.pt";
inline constexpr char kColbertFile[] = "colbert_linear.pt";

// The sparse_linear.pt of the directory (which must list it): its
// Linear(hidden, 1) with the excluded ids given. Errors name the file.
absl::StatusOr<std::unique_ptr<LexicalWeightsHead>> LoadLexicalWeights(
    ModelDirectory& directory, int64_t hidden, std::vector<int32_t> excluded_ids);

// Null (and OK) when the directory has no colbert_linear.pt; else its
// Linear(hidden, D), skipping the first token as bge-m3 does.
absl::StatusOr<std::unique_ptr<MultiVectorWeights>> LoadBgeM3ColbertIfAny(ModelDirectory& directory,
                                                                          int64_t hidden);

// The (id, weight) pairs of one sequence ([tokens, H] states, `ids` its
// token ids) above zero, by descending weight (ties: lower id first), at
// most `max_active_dims` (0: all).
void RunLexicalWeights(const LexicalWeightsHead& head, const float* states,
                       absl::Span<const int32_t> ids, int max_active_dims,
                       std::vector<SparseEntry>* out);

// PyLate's ColBERT projection (the pipeline's token_projection, modules.json's
// pylate.models.Dense.Dense; null: none, and the result is null) as the
// multi-vector head, on every token. `model_dir` names its folder.
absl::StatusOr<std::unique_ptr<MultiVectorWeights>> ColbertProjectionHead(
    const DenseLayer* projection, const std::string& model_dir, int64_t hidden);

// colbert-ir's HF_ColBERT checkpoint (config.json's "architectures" names
// it): its "linear.weight" [D, H], no bias, on every token; null (and OK)
// for any other checkpoint.
absl::StatusOr<std::unique_ptr<MultiVectorWeights>> LoadHfColbertIfAny(
    const Checkpoint& checkpoint, const nlohmann::json& config_json, int64_t hidden);

// One normalized vector per kept token of a sequence ([tokens, H] states):
// `keep` (one flag per token, empty: every token) and the head's
// skip_first_token choose them. `out` gets rows x dimensions floats.
void RunMultiVectors(const MultiVectorWeights& weights, const float* states, int64_t tokens,
                     absl::Span<const uint8_t> keep, std::vector<float>* out, int* rows);

}  // namespace engine
