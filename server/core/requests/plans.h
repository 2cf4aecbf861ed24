// Every request kind as a plan (plan.h): one function per kind, each
// defined in its own file of this folder, which owns all of that kind's
// rules (checks, modes, how its outputs become its answer). They run on the
// caller's thread and keep nothing of the request; the plan runner
// (server/core/dispatch/plan_runner.h) executes what they return. Errors:
// INVALID_ARGUMENT naming the input (input_tokenizer.h), FAILED_PRECONDITION
// when the model lacks the head (server/core/model/model_heads.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/requests/input_tokenizer.h"
#include "server/core/requests/late_chunking.h"
#include "server/core/requests/plan.h"

namespace server::core {

// encode_plan.cc: embeddings and token states, pooled as the request or the
// model says; window mode (long_inputs.h) when the request runs in it.
absl::StatusOr<Plan<core::EncodeResult>> PlanEncode(const InputTokenizer& input_tokenizer,
                                                    const core::EncodeRequest& request);
// The inputs of an encode request that does not run in window mode, as one
// batch request (what PlanEncode submits then).
absl::StatusOr<std::unique_ptr<BatchRequest>> EncodeInputs(const InputTokenizer& input_tokenizer,
                                                           const core::EncodeRequest& request);

// rerank_plan.cc: a cross-encoder's (query, text) pairs (cut, or in window
// mode), a prompted reranker's (Qwen3-Reranker) prompts, or ColBERT's
// MaxSim; in parts of at most `bounds` each, so that a request may hold more
// texts than one batch (up to max_rerank_texts).
struct PartBounds {
  int max_inputs = 0;
  int64_t max_tokens = 0;
};
absl::StatusOr<Plan<core::RerankResult>> PlanRerank(const InputTokenizer& input_tokenizer,
                                                    const core::RerankRequest& request,
                                                    PartBounds bounds);

// classify_plan.cc: a sequence classifier's label scores.
absl::StatusOr<Plan<core::ClassifyResult>> PlanClassify(const InputTokenizer& input_tokenizer,
                                                        const core::ClassifyRequest& request);

// sparse_plan.cc: SPLADE's (or bge-m3's lexical) sparse weights.
absl::StatusOr<Plan<core::SparseResult>> PlanSparse(const InputTokenizer& input_tokenizer,
                                                    const core::SparseRequest& request);

// multi_plan.cc: several outputs (dense, sparse, ColBERT) from one pass.
absl::StatusOr<Plan<core::MultiResult>> PlanMulti(const InputTokenizer& input_tokenizer,
                                                  const core::MultiRequest& request);

// chunks_plan.cc: late chunking (late_chunking.h): the text's windows as one
// part (pooling NONE), pooled per chunk when they are back.
absl::StatusOr<Plan<core::ChunksResult>> PlanLateChunks(const InputTokenizer& input_tokenizer,
                                                        const core::ChunksRequest& request);

// tokenize.cc: answered on the caller's thread, nothing queued.
absl::StatusOr<engine::Encoding> TokenizeText(const InputTokenizer& input_tokenizer,
                                              const core::TokenizeRequest& request);
// Ids back to text (INVALID_ARGUMENT names an id outside the vocabulary).
absl::StatusOr<std::string> DecodeIds(const InputTokenizer& input_tokenizer,
                                      const core::DecodeRequest& request);

}  // namespace server::core
