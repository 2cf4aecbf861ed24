// Classify requests: a sequence classifier's label scores per text or pair.
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

using core::Input;
using core::WithInputIndex;

absl::StatusOr<std::unique_ptr<BatchRequest>> BuildClassify(const InputTokenizer& input_tokenizer,
                                                            const core::ClassifyRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  RETURN_IF_ERROR(CheckHead(model.heads, HeadRequest::kClassify));
  RETURN_IF_ERROR(input_tokenizer.CheckInputCount(request.inputs.size()));
  for (int i = 0; i < static_cast<int>(request.inputs.size()); ++i) {
    const Input::Kind kind = request.inputs[static_cast<size_t>(i)].kind;
    if (kind != Input::Kind::kText && kind != Input::Kind::kTextPair) {
      return WithInputIndex(i, absl::InvalidArgumentError("classify takes a text or a text pair"));
    }
  }
  OutputSpec spec;
  spec.head = OutputHead::kClassify;
  InputTokenizer::InputOptions options =
      input_tokenizer.CutOptions(request.truncate, request.truncation_side);
  return input_tokenizer.BuildInputs(request.inputs, options, spec);
}

}  // namespace

absl::StatusOr<Plan<core::ClassifyResult>> PlanClassify(const InputTokenizer& input_tokenizer,
                                                        const core::ClassifyRequest& request) {
  ASSIGN_OR_RETURN(std::unique_ptr<BatchRequest> part, BuildClassify(input_tokenizer, request));
  // Built, so the model has its classifier.
  const LoadedModel* model = &input_tokenizer.model();
  return OnePartPlan<core::ClassifyResult>(
      std::move(part),
      [model, raw = request.raw_scores](
          std::vector<InputOutput> outputs) -> absl::StatusOr<core::ClassifyResult> {
        return ToClassifyResult(std::move(outputs), *model->heads.classifier, raw);
      });
}

}  // namespace server::core
