// Which outputs a model serves (embeddings always; classify, rerank,
// sparse and multi-vector when it carries the heads, engine/heads.h) and the
// FAILED_PRECONDITION a request for a missing one gets.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "server/core/model/model_loader.h"

namespace server::core {

// The payload that marks a FAILED_PRECONDITION as a missing head (TEI
// answers that 424, a tokenizer-less model's text input 422).
inline constexpr char kMissingHeadPayload[] = "encoder-service/missing-head";
inline bool IsMissingHead(const absl::Status& status) {
  return status.GetPayload(kMissingHeadPayload).has_value();
}

// kEmbedding: the model's own embedding (its pipeline's pooling).
// kMultiVector: ColBERT vectors (a multi-vector head).
enum class HeadRequest { kEmbedding, kClassify, kRerank, kSparse, kMultiVector };

// "embeddings; classify with 3 labels; rerank; sparse": what `heads` serves.
std::string ServedOutputs(const ModelHeads& heads);

// OK when `heads` serves `request`, else FAILED_PRECONDITION naming what the
// model serves. Rerank needs a classifier with exactly one label (a
// cross-encoder).
absl::Status CheckHead(const ModelHeads& heads, HeadRequest request);

}  // namespace server::core
