// Which outputs a model serves (embeddings always; classify, rerank and
// sparse when it carries the heads, engine/heads.h) and the
// FAILED_PRECONDITION a request for a missing one gets.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "server/core/model_loader.h"

namespace server {

enum class HeadRequest { kClassify, kRerank, kSparse };

// "embeddings; classify with 3 labels; rerank; sparse": what `heads` serves.
std::string ServedOutputs(const ModelHeads& heads);

// OK when `heads` serves `request`, else FAILED_PRECONDITION naming what the
// model serves. Rerank needs a classifier with exactly one label (a
// cross-encoder).
absl::Status CheckHead(const ModelHeads& heads, HeadRequest request);

}  // namespace server
