// Sparse requests: SPLADE's masked-LM weights (or bge-m3's lexical weights).
#include "server/core/requests/plans.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/core/api/input_error.h"
#include "server/core/model/model_heads.h"
#include "server/core/requests/head_results.h"

namespace server::core {
namespace {

absl::StatusOr<std::unique_ptr<BatchRequest>> BuildSparse(const InputTokenizer& input_tokenizer,
                                                          const core::SparseRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  RETURN_IF_ERROR(CheckHead(model.heads, HeadRequest::kSparse));
  RETURN_IF_ERROR(input_tokenizer.CheckInputCount(request.inputs.size()));
  RETURN_IF_ERROR(CheckMaxActiveDims(request.max_active_dims));
  OutputSpec spec;
  spec.head = OutputHead::kSparse;
  spec.sparse = model.heads.sparse_options;
  spec.sparse.max_active_dims = request.max_active_dims;
  InputTokenizer::InputOptions options =
      input_tokenizer.CutOptions(request.truncate, request.truncation_side);
  return input_tokenizer.BuildInputs(request.inputs, options, spec);
}

}  // namespace

absl::StatusOr<Plan<core::SparseResult>> PlanSparse(const InputTokenizer& input_tokenizer,
                                                    const core::SparseRequest& request) {
  ASSIGN_OR_RETURN(std::unique_ptr<BatchRequest> part, BuildSparse(input_tokenizer, request));
  const engine::Tokenizer* tokenizer =
      request.return_tokens ? input_tokenizer.model().tokenizer.get() : nullptr;
  return OnePartPlan<core::SparseResult>(
      std::move(part),
      [tokenizer](std::vector<InputOutput> outputs) -> absl::StatusOr<core::SparseResult> {
        return ToSparseResult(std::move(outputs), tokenizer);
      });
}

}  // namespace server::core
