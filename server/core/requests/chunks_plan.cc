// Late chunking requests (late_chunking.h): the text's windows run as one
// part on the shared queue, then each chunk's vector is pooled from their
// stitched token states.
#include "server/core/requests/plans.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/status_macros.h"

namespace server::core {
absl::StatusOr<Plan<core::ChunksResult>> PlanLateChunks(const InputTokenizer& input_tokenizer,
                                                        const core::ChunksRequest& request) {
  auto part = std::make_unique<BatchRequest>();
  ASSIGN_OR_RETURN(chunking::ChunkPlan planned,
                   chunking::PlanChunks(input_tokenizer, request, &part->inputs));
  auto chunks = std::make_shared<const chunking::ChunkPlan>(std::move(planned));
  // Every token state of every window, as they are.
  part->spec.pooling = engine::Pooling::kNone;
  part->spec.normalize = false;
  const LoadedModel* model = &input_tokenizer.model();
  return OnePartPlan<core::ChunksResult>(
      std::move(part),
      [model, chunks](std::vector<InputOutput> outputs) -> absl::StatusOr<core::ChunksResult> {
        return chunking::PoolChunks(*model, *chunks, outputs);
      });
}

}  // namespace server::core
