// Multi requests: several outputs of the model from one pass over each input
// (BAAI/bge-m3's dense, sparse and ColBERT outputs; a ColBERT model's query
// or document encoding).
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

absl::StatusOr<std::unique_ptr<BatchRequest>> BuildMulti(const InputTokenizer& input_tokenizer,
                                                         const core::MultiRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  if (!request.dense && !request.sparse && !request.colbert) {
    return absl::InvalidArgumentError(
        "outputs is empty: ask for one or more of dense, sparse and colbert");
  }
  for (const auto& [wanted, head] : {std::pair{request.dense, HeadRequest::kEmbedding},
                                     std::pair{request.sparse, HeadRequest::kSparse},
                                     std::pair{request.colbert, HeadRequest::kMultiVector}}) {
    if (!wanted) continue;
    RETURN_IF_ERROR(CheckHead(model.heads, head));
  }
  RETURN_IF_ERROR(input_tokenizer.CheckInputCount(request.inputs.size()));
  RETURN_IF_ERROR(CheckMaxActiveDims(request.max_active_dims));
  OutputSpec spec;
  spec.head = OutputHead::kMulti;
  spec.multi = {request.dense, request.sparse, request.colbert, nullptr};
  // The dense output is the model's embedding as its pipeline defines it.
  spec.pooling = model.default_pooling;
  spec.model_pooling = true;
  spec.apply_dense = true;
  spec.normalize = model.pipeline.normalize;
  spec.sparse = model.heads.sparse_options;
  spec.sparse.max_active_dims = request.max_active_dims;
  InputTokenizer::InputOptions options =
      input_tokenizer.CutOptions(request.truncate, request.truncation_side);
  if (model.colbert.has_value()) {
    options.colbert = &*model.colbert;
    options.input_type = request.input_type;
    // A document's punctuation has no vector (PyLate's skiplist); a query keeps all.
    if (request.input_type == core::InputType::kDocument) {
      spec.multi.skip_ids = &model.colbert->skip_ids;
    }
  }
  absl::StatusOr<std::unique_ptr<BatchRequest>> built =
      input_tokenizer.BuildInputs(request.inputs, options, spec);
  if (built.ok() && request.colbert) {
    const int skipped = model.heads.multi_vector->skip_first_token ? 1 : 0;
    RETURN_IF_ERROR(input_tokenizer.CheckOutputVectors(**built, skipped));
  }
  return built;
}

}  // namespace

absl::StatusOr<Plan<core::MultiResult>> PlanMulti(const InputTokenizer& input_tokenizer,
                                                  const core::MultiRequest& request) {
  ASSIGN_OR_RETURN(std::unique_ptr<BatchRequest> part, BuildMulti(input_tokenizer, request));
  const engine::Tokenizer* tokenizer =
      request.return_tokens ? input_tokenizer.model().tokenizer.get() : nullptr;
  // The answer needs which outputs were asked, not the inputs.
  core::MultiRequest asked;
  asked.dense = request.dense;
  asked.sparse = request.sparse;
  asked.colbert = request.colbert;
  return OnePartPlan<core::MultiResult>(
      std::move(part),
      [tokenizer, asked = std::move(asked)](
          std::vector<InputOutput> outputs) -> absl::StatusOr<core::MultiResult> {
        return ToMultiResult(std::move(outputs), asked, tokenizer);
      });
}

}  // namespace server::core
