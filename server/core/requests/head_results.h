// The batcher's per-input outputs turned into the answers of the head
// requests: classify's label scores, rerank's sorted hits, sparse's entries.
// Pure functions, no threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/heads.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/backend.h"

namespace server::core {

// Each output's logits as label scores (the head's activation applied unless
// `raw_scores`), by descending score, ties by label id.
core::ClassifyResult ToClassifyResult(std::vector<InputOutput> outputs,
                                      const engine::ClassifierHead& head, bool raw_scores);

// outputs[i] scores request.texts[i] (one logit each): the hits by
// descending score (ties: lower index first), cut to top_n.
core::RerankResult ToRerankResult(std::vector<InputOutput> outputs,
                                  const core::RerankRequest& request,
                                  engine::ScoreActivation activation);

// outputs[0] is the query's ColBERT vectors, outputs[i + 1] text i's: the
// hits by MaxSim score (head.mean_score says how), as ToRerankResult orders them.
core::RerankResult ToMaxSimRerankResult(std::vector<InputOutput> outputs,
                                        const core::RerankRequest& request,
                                        const engine::MultiVectorHead& head);

// Each output's sparse entries, with the tokenizer's token for each id when
// `tokenizer` is not null.
core::SparseResult ToSparseResult(std::vector<InputOutput> outputs,
                                  const engine::Tokenizer* tokenizer);

// Each output's parts as `request` asked for them (the sparse entries with
// their tokens when `tokenizer` is not null).
core::MultiResult ToMultiResult(std::vector<InputOutput> outputs, const core::MultiRequest& request,
                                const engine::Tokenizer* tokenizer);

}  // namespace server::core
